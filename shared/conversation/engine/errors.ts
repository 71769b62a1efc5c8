import { DomainError } from '../../kernel/errors';

/** Something the engine does not support yet (tool calls, dynamic behaviors, referenced machines). */
export class EngineCapabilityError extends DomainError {
  constructor(message: string) {
    super(501, message);
    this.name = 'EngineCapabilityError';
  }
}

/** A stored state machine version that cannot be followed (validation should have caught it). */
export class StateMachineInconsistentError extends DomainError {
  constructor(message: string) {
    super(500, `The state machine version is inconsistent: ${message}`);
    this.name = 'StateMachineInconsistentError';
  }
}

/** A tool a state offers or designates has no deployed, non-deprecated version matching its constraint. */
export class ToolUnavailableError extends DomainError {
  constructor(message: string) {
    super(409, message);
    this.name = 'ToolUnavailableError';
  }
}
