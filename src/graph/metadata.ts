// Provider metadata on a part (a reasoning block's signature, an encrypted copy, an item id): looked
// up by key pattern, a few levels deep, as providers nest it under their own name.

/** `metadata` has a non-empty value under a key matching `key`, within 4 levels. */
export function metadataHasKey(metadata: unknown, key: RegExp, depth = 0): boolean {
  if (!metadata || typeof metadata !== "object" || depth > 3) return false;
  for (const [k, x] of Object.entries(metadata)) {
    if (key.test(k) && x !== undefined && x !== null && x !== "") return true;
    if (metadataHasKey(x, key, depth + 1)) return true;
  }
  return false;
}
