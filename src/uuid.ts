const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a value has the shape of a UUID (any case); ids of another shape are simply not found. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
