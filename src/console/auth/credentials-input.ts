import * as z from "zod";
import { PASSWORD_MAX, PASSWORD_MIN } from "./password";

/** Sign-in and sign-up form fields. Emails are compared trimmed and lower-cased. */
export const emailField = z
  .string()
  .trim()
  .toLowerCase()
  .max(254, "Enter an email address of at most 254 characters.")
  .pipe(z.email("Enter an email address like name@example.com."));

export const newPasswordField = z
  .string()
  .min(PASSWORD_MIN, `Choose a password of at least ${PASSWORD_MIN} characters.`)
  .max(PASSWORD_MAX, `Choose a password of at most ${PASSWORD_MAX} characters.`);

/** A sign-in password: any non-empty text up to the maximum (older rules must keep working). */
export const passwordField = z.string().min(1, "Enter your password.");

export type FieldErrors = Partial<Record<"email" | "password", string>>;

export function fieldErrors(error: z.ZodError): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of error.issues) {
    const key = issue.path[0];
    if ((key === "email" || key === "password") && !out[key]) out[key] = issue.message;
  }
  return out;
}
