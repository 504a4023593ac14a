import type { TestProject } from "vitest/node";
import { startSimulator } from "../simulator/server";

declare module "vitest" {
  export interface ProvidedContext {
    simUrl: string;
  }
}

/** One carrier simulator for the whole worker test run, on an ephemeral 127.0.0.1 port. */
export default async function setup(project: TestProject) {
  const sim = await startSimulator({ port: 0 });
  project.provide("simUrl", sim.url);
  return async () => sim.close();
}
