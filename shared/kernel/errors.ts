/**
 * Domain errors. Domain modules throw these; the HTTP layer maps each to its status
 * (the spec's table: 400, 401, 403, 404, 409, 413, 415, 422, 429, 503) with `{"detail": ...}`.
 */
export class DomainError extends Error {
  readonly statusCode: number;
  /** When retrying may succeed, and after how long: sent as `Retry-After`. */
  readonly retryAfterSeconds?: number;
  constructor(statusCode: number, message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options);
    this.name = 'DomainError';
    this.statusCode = statusCode;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

export class BadRequestError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(400, message, options);
    this.name = 'BadRequestError';
  }
}

export class RequestTimeoutError extends DomainError {
  constructor(message: string) {
    super(408, message);
    this.name = 'RequestTimeoutError';
  }
}

export class UnauthorizedError extends DomainError {
  constructor(message = 'Invalid authorization credentials.', options?: { cause?: unknown }) {
    super(401, message, options);
    this.name = 'UnauthorizedError';
  }
}

export class ForbiddenError extends DomainError {
  constructor(message = 'Missing required permissions.', options?: { cause?: unknown }) {
    super(403, message, options);
    this.name = 'ForbiddenError';
  }
}

export class NotFoundError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(404, message, options);
    this.name = 'NotFoundError';
  }
}

export class MethodNotAllowedError extends DomainError {
  readonly allowed: string[];
  constructor(allowed: string[]) {
    super(405, 'Method not allowed.');
    this.name = 'MethodNotAllowedError';
    this.allowed = allowed;
  }
}

export class ConflictError extends DomainError {
  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(409, message, options);
    this.name = 'ConflictError';
  }
}

export class PayloadTooLargeError extends DomainError {
  constructor(message: string) {
    super(413, message);
    this.name = 'PayloadTooLargeError';
  }
}

export class UnsupportedMediaTypeError extends DomainError {
  constructor(message: string) {
    super(415, message);
    this.name = 'UnsupportedMediaTypeError';
  }
}

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** 422 with the list body `{"detail":[{"loc","msg","type"}]}`. */
export class ValidationError extends DomainError {
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[]) {
    super(422, issues.map((issue) => `${issue.loc.join('.')}: ${issue.msg}`).join('; '));
    this.name = 'ValidationError';
    this.issues = issues;
  }
}

export class RateLimitedError extends DomainError {
  declare readonly retryAfterSeconds: number;
  /** X-RateLimit-* headers, sent with the 429 too so clients can back off. */
  readonly headers: Record<string, string>;
  constructor(message: string, retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(429, message, { retryAfterSeconds });
    this.name = 'RateLimitedError';
    this.headers = headers;
  }
}

export class MaintenanceError extends DomainError {
  constructor() {
    super(503, 'The service is going through temporary maintenance.');
    this.name = 'MaintenanceError';
  }
}

/**
 * 503 with `Retry-After`: the table refused the work for now (throttling, or a transaction that
 * kept losing races) after the retries the client makes; the same request may succeed shortly.
 */
export class ServiceUnavailableError extends DomainError {
  declare readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number, options?: { cause?: unknown }) {
    super(503, message, { ...options, retryAfterSeconds });
    this.name = 'ServiceUnavailableError';
  }
}

/**
 * 502: a provider this platform calls on the caller's behalf (Twilio placing a call) refused the
 * request or did not answer; the message says what it answered, and nothing was left half-done.
 */
export class BadGatewayError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(502, message, options);
    this.name = 'BadGatewayError';
  }
}
