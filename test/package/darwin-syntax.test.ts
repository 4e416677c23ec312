/**
 * The macOS syntax check (npm run check:darwin, run by CI over every macOS source) is only worth
 * something if it compiles as a Mac would: the macOS branches taken, the macOS-only declarations
 * there, and Linux-only interfaces refused. Each case below is a small source that must pass or
 * fail exactly as it would on macOS.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { checkDarwin } from "../../scripts/package/darwin-syntax.mjs"
import { skipUnless } from "../support/skip.ts"

const compiler = process.env["CLANGXX"] ?? "clang++"
const haveClang = spawnSync(compiler, ["--version"]).status === 0

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-darwin-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const compile = async (name: string, source: string) => {
  const file = path.join(dir, `${name}.cc`)
  fs.writeFileSync(file, source)
  return checkDarwin(compiler, file)
}

describe("macOS syntax check", () => {
  beforeEach((ctx) => skipUnless(ctx, haveClang, `${compiler} not found (CI installs clang; apt-get install clang)`))
  it("accepts the macOS-only interfaces the sources call", async () => {
    const r = await compile(
      "macos_only",
      `#include <fcntl.h>
#include <sys/attr.h>
#include <sys/stat.h>
#include <sys/sysctl.h>
#include <unistd.h>
#include <cstdio>
int use(int fd, const struct stat& st) {
  struct attrlist want {};
  want.bitmapcount = ATTR_BIT_MAP_COUNT;
  want.commonattr = ATTR_CMN_NAME;
  alignas(8) char buf[64];
  size_t len = sizeof buf;
  char version[16];
  return getattrlistat(fd, "x", &want, buf, sizeof buf, FSOPT_NOFOLLOW) +
         sysctlbyname("kern.osproductversion", version, &len, nullptr, 0) +
         renameatx_np(fd, "a", fd, "b", RENAME_EXCL) + ::fcntl(fd, F_FULLFSYNC) +
         static_cast<int>(st.st_birthtimespec.tv_sec + st.st_mtimespec.tv_nsec) +
         (O_NOFOLLOW_ANY | O_SEARCH);
}
`
    )
    expect(r.output).toBe("")
    expect(r.ok).toBe(true)
  })

  it("compiles the __APPLE__ branches and not the __linux__ ones", async () => {
    const apple = await compile("apple_branch", "#if defined(__APPLE__)\nint f() { return not_declared_anywhere; }\n#endif\n")
    expect(apple.ok).toBe(false)
    expect(apple.output).toContain("not_declared_anywhere")
    const linux = await compile("linux_branch", "#if defined(__linux__)\n#error linux branch compiled\n#endif\nint f() { return 0; }\n")
    expect(linux.output).toBe("")
    expect(linux.ok).toBe(true)
  })

  it.each([
    ["statx", '#include <sys/stat.h>\nint f(int fd) { struct statx s; return statx(fd, "", 0, 0, &s); }\n', "poisoned"],
    ["renameat2", '#include <stdio.h>\nint f(int d) { return renameat2(d, "a", d, "b", 0); }\n', "poisoned"],
    ["pipe2", "#include <unistd.h>\nint f(int* p) { return pipe2(p, 0); }\n", "poisoned"],
    ["O_PATH", "#include <fcntl.h>\nint f() { return O_PATH; }\n", "O_PATH"],
    ["O_TMPFILE", "#include <fcntl.h>\nint f() { return O_TMPFILE; }\n", "O_TMPFILE"],
    ["AT_EMPTY_PATH", "#include <fcntl.h>\nint f() { return AT_EMPTY_PATH; }\n", "AT_EMPTY_PATH"],
    ["st_mtim", "#include <sys/stat.h>\nlong f(const struct stat& s) { return s.st_mtim.tv_sec; }\n", "poisoned"]
  ])("refuses %s, which macOS does not have", async (name, source, why) => {
    const r = await compile(`linux_${name}`, source)
    expect(r.ok).toBe(false)
    expect(r.output).toContain(why)
  })

  it("holds the project's warnings to -Werror", async () => {
    const r = await compile("warning", "int f(int unused_parameter) { return 0; }\n")
    expect(r.ok).toBe(false)
    expect(r.output).toContain("-Werror")
  })
})
