// Included as "linalg_base/status.h" (strip_include_prefix + include_prefix).
#pragma once
namespace linalg {
enum class Status : int { kOk = 0, kBadSize = 1 };
}  // namespace linalg
