// Stripe's error object and the request errors its API answers with, messages as Stripe words them.

export type StripeErrorBody = {
  type: "invalid_request_error" | "idempotency_error" | "card_error" | "api_error";
  message: string;
  code?: string;
  param?: string;
  decline_code?: string;
};

/** Thrown by a handler: answered as `{"error": body}` with this status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: StripeErrorBody,
  ) {
    super(body.message);
  }
}

/** `{"error": {...}}` with the `doc_url` Stripe adds for every error code. */
export function errorPayload(body: StripeErrorBody): { error: StripeErrorBody & { doc_url?: string } } {
  return { error: body.code ? { ...body, doc_url: `https://stripe.com/docs/error-codes/${body.code.replace(/_/g, "-")}` } : body };
}

export function invalid(param: string | undefined, message: string, code?: string): ApiError {
  return new ApiError(400, { type: "invalid_request_error", message, ...(code ? { code } : {}), ...(param ? { param } : {}) });
}

export function missingParam(param: string): ApiError {
  return invalid(param, `Missing required param: ${param}.`, "parameter_missing");
}

export function unknownParam(param: string): ApiError {
  return invalid(param, `Received unknown parameter: ${param}`, "parameter_unknown");
}

/** A missing object: 404 `resource_missing`; `param` is "id" for the URL's id, else the parameter naming it. */
export function noSuch(kind: string, id: string, param = "id"): ApiError {
  return new ApiError(404, { type: "invalid_request_error", code: "resource_missing", param, message: `No such ${kind}: '${id}'` });
}

export function unrecognizedUrl(method: string, path: string): ApiError {
  return new ApiError(404, {
    type: "invalid_request_error",
    message: `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
  });
}
