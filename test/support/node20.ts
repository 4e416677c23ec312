/**
 * vitest 5 (the version @effect/vitest asks for) is built for Node 22. On its main thread it calls
 * three functions Node 20 lacks: `Map.groupBy` when it reports a failure, `Object.groupBy` when it
 * saves snapshots and `Promise.withResolvers` when it watches. The package supports Node 20.19+,
 * so the suite still runs there; these stand in for them, with the specified behaviour, only where
 * they are missing. The test workers need none of them.
 */
type Grouper<T, K> = (item: T, index: number) => K

const groupBy = <T, K>(items: Iterable<T>, key: Grouper<T, K>): Map<K, Array<T>> => {
  const groups = new Map<K, Array<T>>()
  let index = 0
  for (const item of items) {
    const k = key(item, index++)
    const group = groups.get(k)
    if (group) group.push(item)
    else groups.set(k, [item])
  }
  return groups
}

const polyfills = { Map, Object, Promise } as unknown as {
  Map: { groupBy?: typeof groupBy }
  Object: { groupBy?: <T>(items: Iterable<T>, key: Grouper<T, PropertyKey>) => Record<PropertyKey, Array<T>> }
  Promise: { withResolvers?: <T>() => { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } }
}

if (polyfills.Map.groupBy === undefined) {
  polyfills.Map.groupBy = groupBy
}
if (polyfills.Object.groupBy === undefined) {
  polyfills.Object.groupBy = (items, key) =>
    Object.assign(Object.create(null) as Record<PropertyKey, never>, Object.fromEntries(groupBy(items, key)))
}
if (polyfills.Promise.withResolvers === undefined) {
  polyfills.Promise.withResolvers = <T>() => {
    let resolve!: (v: T) => void
    let reject!: (e: unknown) => void
    const promise = new Promise<T>((res, rej) => {
      resolve = res
      reject = rej
    })
    return { promise, resolve, reject }
  }
}
