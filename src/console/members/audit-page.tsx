import { Hono } from "hono";
import type { ConsoleEnv } from "../console-env";
import { accountPage } from "../http/stacks";
import { pageMeta, render } from "../layout/render";
import { Layout, type PageMeta } from "../layout/layout";
import { utcDateTime } from "../layout/format";
import { AUDIT_PAGE, auditPage } from "../../members/audit-store";
import type { AuditEvent } from "../../db/schema";

/** /settings/audit: the account's administrative actions, newest first, AUDIT_PAGE a page (owners and admins). */
export const auditRoutes = new Hono<ConsoleEnv>();

auditRoutes.get("/settings/audit", ...accountPage, async (c) => {
  const page = Math.max(0, Math.min(1_000_000, Number.parseInt(c.req.query("page") ?? "0", 10) || 0));
  const { rows, total } = await auditPage(c.env.DB, c.var.session!.accountId, page * AUDIT_PAGE);
  return render(
    c,
    <AuditPage
      meta={await pageMeta(c, "Audit log")}
      rows={rows}
      page={page}
      more={(page + 1) * AUDIT_PAGE < total}
      keepDays={c.var.settings.AUDIT_LOG_KEEP_DAYS}
    />,
  );
});

function AuditPage(props: { meta: PageMeta; rows: AuditEvent[]; page: number; more: boolean; keepDays: number }) {
  return (
    <Layout meta={props.meta}>
      <h1>Audit log</h1>
      <p>
        Administrative actions on this account — keys, guardrails, presets, members and invitations, credits — with who did them and how (a console session or a
        management key). Kept {props.keepDays} days.
      </p>
      {props.rows.length === 0 ? (
        <p>Nothing yet.</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="audit-title" tabindex={0}>
          <table class="stack" id="audit-title" aria-label="Audit log">
            <thead>
              <tr>
                <th scope="col">When (UTC)</th>
                <th scope="col">Who</th>
                <th scope="col">Via</th>
                <th scope="col">Action</th>
                <th scope="col">On</th>
              </tr>
            </thead>
            <tbody>
              {props.rows.map((e) => (
                <tr>
                  <th scope="row">{utcDateTime(e.at)}</th>
                  <td data-label="Who">{e.actorEmail ?? "the operator's key"}</td>
                  <td data-label="Via">{e.via}</td>
                  <td data-label="Action">
                    <code>{e.action}</code>
                  </td>
                  <td data-label="On">{e.target ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p>
        {props.page > 0 && <a href={`/settings/audit?page=${props.page - 1}`}>Newer</a>}{" "}
        {props.more && <a href={`/settings/audit?page=${props.page + 1}`}>Older</a>}
      </p>
    </Layout>
  );
}
