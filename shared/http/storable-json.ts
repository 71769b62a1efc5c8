import { ValidationError } from '../kernel/errors';
import { unstorableIssues } from '../kernel/storable-values';

/** The body as parsed, or a 422 listing every value that could not be stored as given. */
export const requireStorable = <T>(body: T): T => {
  const issues = unstorableIssues(body);
  if (issues.length > 0) throw new ValidationError(issues);
  return body;
};
