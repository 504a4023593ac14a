import { Field, SelectField, TextArea } from "../layout/forms";
import type { ApiKey } from "../../db/schema";
import type { DestinationForm, DestinationFormValues } from "./destination-form";

const KINDS = [
  { value: "otel-collector", label: "OpenTelemetry collector (OTLP/HTTP)" },
  { value: "webhook", label: "Webhook (signed JSON)" },
] as const;
const ENCODINGS = [
  { value: "protobuf", label: "Protobuf" },
  { value: "json", label: "JSON" },
] as const;
const METHODS = [
  { value: "POST", label: "POST" },
  { value: "PUT", label: "PUT" },
] as const;

/** A new destination's form: on, every key, every request. */
export const NEW_DESTINATION: DestinationFormValues = {
  type: "otel-collector",
  name: "",
  endpoint: "",
  encoding: "protobuf",
  method: "POST",
  headers: "",
  samplingRate: "1",
  enabled: true,
  cost: false,
  identity: false,
  requestContext: false,
  keys: [],
};

const Check = (props: { name: string; on: boolean; children: string }) => (
  <div class="field">
    <label>
      <input type="checkbox" name={props.name} value="on" checked={props.on} /> {props.children}
    </label>
  </div>
);

/**
 * The fields of a destination (docs/observability.md, "Destinations"). Creating, the kind is chosen and both
 * kinds' own fields show (the other kind's are ignored); editing, the kind is fixed.
 */
export function DestinationFields(props: { idPrefix: string; form: DestinationForm; keys: ApiKey[]; creating: boolean }) {
  const { idPrefix: p, keys } = props;
  const { values: v, errors } = props.form;
  const collector = props.creating || v.type === "otel-collector";
  const webhook = props.creating || v.type === "webhook";
  // A filtered key since deleted still shows, so saving the form does not drop it unseen.
  const gone = v.keys.filter((h) => !keys.some((k) => k.hash === h));
  return (
    <>
      {props.creating && <SelectField id={`${p}-type`} name="type" label="Kind" options={KINDS} value={v.type} error={errors.type} />}
      <Field id={`${p}-name`} name="name" label="Name" value={v.name} error={errors.name} maxlength={100} required />
      <Field
        id={`${p}-endpoint`}
        name="endpoint"
        label={props.creating ? "Endpoint URL" : webhook ? "Webhook URL" : "Collector endpoint"}
        hint="https (plain http only to localhost). A collector's base URL (/v1/traces is added) or its traces URL; a webhook's URL."
        value={v.endpoint}
        error={errors.endpoint}
        maxlength={2048}
        required
      />
      {collector && (
        <SelectField
          id={`${p}-encoding`}
          name="encoding"
          label={props.creating ? "Encoding (collectors)" : "Encoding"}
          options={ENCODINGS}
          value={v.encoding}
        />
      )}
      {webhook && <SelectField id={`${p}-method`} name="method" label={props.creating ? "Method (webhooks)" : "Method"} options={METHODS} value={v.method} />}
      <TextArea
        id={`${p}-headers`}
        name="headers"
        label="Headers"
        hint="Sent with every export (a collector's credentials): one per line, Name: value. Stored sealed and shown masked; a masked value left as it is keeps the stored one."
        value={v.headers}
        error={errors.headers}
        rows={3}
      />
      <Field
        id={`${p}-sampling`}
        name="sampling_rate"
        label="Sampling rate"
        hint="From 0 (nothing) to 1 (every request): 0.1 sends one request in ten, chosen by its generation id."
        inputmode="decimal"
        value={v.samplingRate}
        error={errors.samplingRate}
      />
      <fieldset class="field">
        <legend>Keys</legend>
        <p class="hint">
          {keys.length + gone.length === 0
            ? "You have no API keys yet: every key's requests go here."
            : "Only the requests of the keys checked; none checked: every key's."}
        </p>
        {keys.map((k) => (
          <Check name={`key_${k.hash}`} on={v.keys.includes(k.hash)}>{`${k.name} (${k.label})`}</Check>
        ))}
        {gone.map((h) => (
          <Check name={`key_${h}`} on={true}>{`A deleted key (${h.slice(0, 8)}…)`}</Check>
        ))}
        {errors.keys && <p class="field-error">{errors.keys}</p>}
      </fieldset>
      <Check name="enabled" on={v.enabled}>
        On: export this account's requests here
      </Check>
      <fieldset class="field">
        <legend>Shown with the destination</legend>
        <p class="hint">
          Stored as OpenRouter's broadcast settings; every span carries cost, key and request metadata whatever they say. No prompt or completion is ever
          exported: records hold none.
        </p>
        <Check name="broadcast_cost" on={v.cost}>
          Cost
        </Check>
        <Check name="broadcast_identity" on={v.identity}>
          Identity
        </Check>
        <Check name="broadcast_request_context" on={v.requestContext}>
          Request context
        </Check>
      </fieldset>
    </>
  );
}
