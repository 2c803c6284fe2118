// An absl-like header: included as "absl/status/status.h" through its
// cc_library's strip_include_prefix.
#pragma once
namespace absl {
enum class StatusCode : int { kOk = 0, kInvalidArgument = 3 };
}  // namespace absl
