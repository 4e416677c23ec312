// The core's entry points: one request, or a batch of them, against a pinned root. Both run on a
// worker thread; nothing here touches JavaScript.
#pragma once
#include <functional>
#include <vector>

#include "request.h"
#include "root.h"
#include "value.h"

namespace pinnedfs {

// Checks a request's operands for what the lexer cannot see (flags, modes, ids, op-specific
// shapes) before any syscall. Bad input is a BadArgument Error, never undefined behaviour.
Status validate(const Request& request);

// Runs one operation. When verify_root is set, the root path's identity is checked first
// (the extension's per-request guard against a root renamed away and replaced), and so is `alias`'s
// when given (see Root::verify_path_identity).
//
// A writeFile whose payload is still base64 text (Request::base64) is decoded first, on a copy: the
// batch path and the tests come here with requests they keep.
Result<Value> execute(const Root& root, const Request& request, bool verify_root,
                      const std::string& alias = {});

// execute() for a request handed over: a writeFile's base64 payload is decoded in the request's
// own storage, before the root is checked or anything is opened, so the worker holds one copy of
// a large payload, not two. Text that is not strict base64 (see base64.h) is BadArgument ("data is
// not valid base64"), with nothing opened, created or truncated.
Result<Value> execute(const Root& root, Request&& request, bool verify_root,
                      const std::string& alias = {});

// execute() for a readFile whose content goes into `buffer`'s storage (see ops::read_file_into);
// `verify_root` and `alias` as in execute().
Result<Value> execute_read(const Root& root, const Request& request, std::string&& buffer,
                           bool verify_root = false, const std::string& alias = {});

struct BatchLimits {
  std::size_t size = 256;              // most members
  std::uint64_t response = 64u << 20;  // most bytes of file content in one answer
  std::uint64_t member = 0;            // most bytes of one member's content (0: the ceiling)
};

// Runs every member in one trip. Members fail alone; a member whose content would push the answer
// past limits.response, or whose file is larger than limits.member, fails alone (TooLarge). The
// root identity is checked before and after: a change detected after the run fails every member
// with IdentityChanged, since their answers may describe another directory. `alias` as in
// execute().
//
// `each`, when given, sees member k's result on the worker thread right after it ran and before the
// next member starts, so a caller can move the content out at once: a batch then holds one content
// at a time instead of growing the heap by the whole answer.
std::vector<Result<Value>> execute_batch(
    const Root& root, const std::vector<Request>& requests, const BatchLimits& limits,
    bool verify_root, const std::function<void(std::size_t, Result<Value>&)>& each = {},
    const std::string& alias = {});

}  // namespace pinnedfs
