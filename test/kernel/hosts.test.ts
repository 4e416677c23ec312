/**
 * The host list the kernel suites run over (support/hosts.ts) holds every extension the tree has:
 * a suite can only prove something of an executor it is given.
 */
import * as NFS from "node:fs"
import { expect, it } from "vitest"
import { hosts } from "./support/hosts.ts"

it("runs over every extension present in the tree", () => {
  const here = new URL("../../src/", import.meta.url)
  const present = (file: string) => NFS.existsSync(new URL(file, here))
  expect(hosts.some((h) => h.name.startsWith("NodeAtomicFileSystem"))).toBe(present("effect/NodeAtomicFileSystem.ts"))
  expect(hosts.some((h) => h.name === "PathAtomicFileSystem")).toBe(present("fallback/PathAtomicFileSystem.ts"))
})
