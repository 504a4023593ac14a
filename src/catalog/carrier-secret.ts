/** The Worker secret holding a carrier's API key: `CARRIER_KEY_` + the slug upper-cased, non-alphanumerics as `_`. */
export function carrierSecretName(slug: string): string {
  return "CARRIER_KEY_" + slug.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}

/** The carrier's API key from the Worker's secrets, if it is set. */
export function carrierSecret(env: object, slug: string): string | undefined {
  const value: unknown = Reflect.get(env, carrierSecretName(slug));
  return typeof value === "string" && value.length > 0 ? value : undefined;
}
