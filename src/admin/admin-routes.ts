import { Hono } from "hono";
import type { AppEnv } from "../keys/caller";
import { requireAdmin } from "./admin-auth";
import { adminLinkRoutes } from "./admin-links";
import { adminAccountRoutes } from "./admin-accounts";
import { adminAuditRoutes } from "./admin-audit";
import { adminRecordRoutes } from "./admin-records";
import { adminByokRoutes } from "./admin-byok";

/** The operator's API behind `npm run admin` (docs/admin.md), every route behind the admin token. */
export const adminRoutes = new Hono<AppEnv>();
adminRoutes.use("*", requireAdmin);
adminRoutes.route("/", adminLinkRoutes);
adminRoutes.route("/", adminAccountRoutes);
adminRoutes.route("/", adminAuditRoutes);
adminRoutes.route("/", adminRecordRoutes);
adminRoutes.route("/", adminByokRoutes);
