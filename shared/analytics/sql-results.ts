/** Where asynchronous SQL results are written in the artifact bucket (erased with the organization). */
export const sqlResultRoot = (orgId: string): string => `sql-results/${orgId}/`;
