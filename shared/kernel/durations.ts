const durationPattern =
  /^P(?!$)(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?=\d)(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** Seconds in an ISO 8601 duration (a year counts 365 days, a month 30); undefined if malformed. */
export const durationSeconds = (value: string): number | undefined => {
  const match = durationPattern.exec(value.trim().toUpperCase());
  if (!match) return undefined;
  const [years, months, weeks, days, hours, minutes, seconds] = match
    .slice(1)
    .map((part) => Number(part ?? 0)) as number[];
  return (
    (((years ?? 0) * 365 + (months ?? 0) * 30 + (weeks ?? 0) * 7 + (days ?? 0)) * 24 + (hours ?? 0)) * 3600 +
    (minutes ?? 0) * 60 +
    (seconds ?? 0)
  );
};
