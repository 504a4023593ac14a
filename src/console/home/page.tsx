import { Layout, type PageMeta } from "../layout/layout";
import { CopyButton, CopyScript } from "../layout/copy-button";

export function jsExample(baseUrl: string, model: string): string {
  return `import OpenAI from "openai";

const client = new OpenAI({
  baseURL: "${baseUrl}",
  apiKey: process.env.SWITCHYARD_API_KEY, // a key from API keys
});

const completion = await client.chat.completions.create({
  model: "${model}",
  messages: [{ role: "user", content: "Hello!" }],
});
console.log(completion.choices[0].message.content);
console.log(completion.usage); // usage.cost: the USD charged`;
}

export function curlExample(baseUrl: string, model: string): string {
  return `curl ${baseUrl}/chat/completions \\
  -H "Authorization: Bearer $SWITCHYARD_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model":"${model}","messages":[{"role":"user","content":"Hello!"}]}'`;
}

/** The APIs this origin serves under the base URL, each with the clients that speak it. */
const APIS = [
  ["/chat/completions", "OpenAI chat completions: the openai SDKs and any OpenAI- or OpenRouter-compatible client"],
  ["/messages", "Anthropic Messages: Anthropic's SDKs and Claude Code"],
  ["/responses", "OpenAI Responses: the openai SDKs and Codex"],
  ["/embeddings", "Embeddings, OpenAI-style"],
] as const;

export function HomePage(props: { meta: PageMeta; baseUrl: string; defaultModel: string; modelCount: number; carrierCount: number }) {
  const signedIn = props.meta.account !== null;
  // Anthropic's clients add /v1 themselves: their base URL is the API's without it.
  const anthropicBase = props.baseUrl.replace(/\/v1$/, "");
  return (
    <Layout meta={props.meta}>
      <h1>One API for first-party and open models</h1>
      <p class="lead">
        Switchyard routes chat, messages, responses and embeddings requests to the carriers that serve each model — first-party models at their makers, open
        models at the carriers that host them — falls back to the next carrier when one fails, and charges your prepaid balance exactly what the serving carrier
        charges: {props.modelCount} models across {props.carrierCount} carriers.
      </p>
      <p>
        {signedIn ? (
          <>
            <a class="button" href="/settings/keys">
              Your API keys
            </a>{" "}
            <a href="/models">Browse the models</a>
          </>
        ) : (
          <>
            <a class="button" href="/sign-up">
              Create an account
            </a>{" "}
            <a href="/sign-in">Sign in</a> · <a href="/models">Browse the models</a>
          </>
        )}
      </p>

      <h2>Base URL</h2>
      <p>Clients work unchanged: only the base URL and the key change.</p>
      <div class="key-output">
        <code id="base-url">{props.baseUrl}</code>
        <CopyButton target="base-url" label="Copy the base URL" />
      </div>
      <p>
        Anthropic's SDKs and Claude Code add <code>/v1</code> themselves: give them <code id="anthropic-base-url">{anthropicBase}</code>.
      </p>
      <ul id="apis">
        {APIS.map(([path, what]) => (
          <li>
            <code>POST {path}</code> — {what}
          </li>
        ))}
      </ul>

      <h2>Example</h2>
      <p>
        With the <code>openai</code> package for JavaScript or TypeScript:
      </p>
      <pre id="example-js">
        <code>{jsExample(props.baseUrl, props.defaultModel)}</code>
      </pre>
      <CopyButton target="example-js" label="Copy the JavaScript example" />
      <p>With curl:</p>
      <pre id="example-curl">
        <code>{curlExample(props.baseUrl, props.defaultModel)}</code>
      </pre>
      <CopyButton target="example-curl" label="Copy the curl example" />

      <h2>How billing works</h2>
      <ul>
        <li>Prices are per 1M tokens, in and out, as listed on each model's page; free models cost nothing.</li>
        <li>
          Each response reports its cost in <code>usage.cost</code>; every request, failed ones included (at cost 0), is listed in your activity.
        </li>
        <li>A paid model needs a positive balance; a key can also carry its own credit limit.</li>
      </ul>
      <CopyScript nonce={props.meta.nonce} />
    </Layout>
  );
}
