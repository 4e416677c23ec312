#include "execute.h"

#include <utility>

#include "base64.h"

#include "../ops/ops.h"

namespace pinnedfs {

Status validate(const Request& r) {
  if (static_cast<unsigned>(r.op) >= static_cast<unsigned>(Op::Count)) {
    return bad_argument("unknown operation");
  }
  if (r.has_mode && r.mode > 07777) {
    return bad_argument("mode " + std::to_string(r.mode) + " is not a permission mode (0..07777)");
  }
  if (r.op == Op::Chown || r.op == Op::Lchown) {
    // -1 keeps the id unchanged, as chown(2) does; anything else must fit uid_t/gid_t.
    if (r.uid < -1 || r.uid > 0xFFFFFFFEll) return bad_argument("uid out of range");
    if (r.gid < -1 || r.gid > 0xFFFFFFFEll) return bad_argument("gid out of range");
  }
  if (static_cast<unsigned>(r.flag) > static_cast<unsigned>(OpenFlag::AXPlus)) {
    return bad_argument("unknown open flag");
  }
  if ((r.op == Op::ReplaceIfUnchanged || r.op == Op::RemoveIfUnchanged) && !r.has_expect &&
      !r.has_expect_identity) {
    return bad_argument(
        "a compare-and-swap needs what the file is expected to be: 'expect' (its "
        "content) or 'identity' (its \"dev:ino\")",
        r.path);
  }
  return ok_status();
}

Result<Value> execute(const Root& root, Request&& request, bool verify_root,
                      const std::string& alias) {
  if (request.op == Op::WriteFile && request.base64) {
    if (!decode_base64_in_place(&request.data)) {
      return bad_argument("data is not valid base64", request.path);
    }
    request.base64 = false;
  }
  return execute(root, static_cast<const Request&>(request), verify_root, alias);
}

Result<Value> execute(const Root& root, const Request& request, bool verify_root,
                      const std::string& alias) {
  if (request.op == Op::WriteFile && request.base64) {
    Request owned = request;
    return execute(root, std::move(owned), verify_root, alias);
  }
  auto valid = validate(request);
  if (!valid.ok()) return valid.take_error();
  if (verify_root) {
    auto same = root.verify_path_identity(alias);
    if (!same.ok()) return same.take_error();
  }
  switch (request.op) {
    // One case per row of the operation table: its handler column (ops/ops.h).
#define PINNEDFS_DISPATCH(name, text, operand, effect, form, text_io, handler) \
  case Op::name:                                                               \
    return ops::handler(root, request);
    PINNEDFS_OPS(PINNEDFS_DISPATCH)
#undef PINNEDFS_DISPATCH
    case Op::Count:
      break;
  }
  return bad_argument("unknown operation");
}

Result<Value> execute_read(const Root& root, const Request& request, std::string&& buffer,
                           bool verify_root, const std::string& alias) {
  if (request.op != Op::ReadFile) return execute(root, request, verify_root, alias);
  auto valid = validate(request);
  if (!valid.ok()) return valid.take_error();
  if (verify_root) {
    auto same = root.verify_path_identity(alias);
    if (!same.ok()) return same.take_error();
  }
  return ops::read_file_into(root, request, std::move(buffer));
}

namespace {
std::uint64_t content_bytes(const Value& v) {
  if (auto* b = std::get_if<Bytes>(&v)) return b->data.size();
  return 0;
}
}  // namespace

std::vector<Result<Value>> execute_batch(
    const Root& root, const std::vector<Request>& requests, const BatchLimits& limits,
    bool verify_root, const std::function<void(std::size_t, Result<Value>&)>& each,
    const std::string& alias) {
  std::vector<Result<Value>> out;
  out.reserve(requests.size());
  if (verify_root) {
    auto before = root.verify_path_identity(alias);
    if (!before.ok()) {
      for (std::size_t i = 0; i < requests.size(); ++i) out.emplace_back(before.error());
      return out;
    }
  }
  std::uint64_t budget = limits.response;
  Request bounded;  // reused: a read member's copy carries its share of the budget
  for (const Request& member : requests) {
    const Request* run = &member;
    if (member.op == Op::ReadFile) {
      // A member larger than what is left of the answer fails alone, before it is read.
      bounded = member;
      bounded.max_bytes = budget == 0 ? 1 : budget;
      for (std::uint64_t limit : {member.max_bytes, limits.member}) {
        if (limit != 0 && limit < bounded.max_bytes) bounded.max_bytes = limit;
      }
      run = &bounded;
    }
    auto result = execute(root, *run, false);
    if (result.ok()) {
      std::uint64_t used = content_bytes(result.value());
      budget = used > budget ? 0 : budget - used;
    }
    if (each) each(out.size(), result);
    out.push_back(std::move(result));
  }
  if (verify_root) {
    auto after = root.verify_path_identity(alias);
    if (!after.ok()) {
      for (auto& r : out) r = Result<Value>(after.error());
    }
  }
  return out;
}

}  // namespace pinnedfs
