//===- Manifest.h - what a launcher needs to know about a kernel -*- C++ -*-===//
//
// `kiln compile --emit cubin|ptx` writes NAME.json beside NAME.cubin: the
// entry point, the parameters in launch order (runtime dims first, as i64,
// then views as global pointers and scalars), the block size, the grid as
// expressions over the runtime dims, and the consts the kernel was built
// with. The C++ runtime and the Python package (python/kiln) both read it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_RUNTIME_MANIFEST_H
#define KILN_BACKENDS_RUNTIME_MANIFEST_H

#include "backends/runtime/Json.h"
#include "backends/runtime/OpPlan.h"
#include "backends/runtime/Signature.h"

namespace kiln {

/// A TMA descriptor the launcher builds and passes by value after the
/// kernel's own parameters: a tiled map over view parameter `param`, copying
/// boxes of `box` elements (outermost dim first, the view's rank), swizzled
/// as `swizzle` says.
struct TensorMapInfo {
  int64_t param = 0;
  std::vector<int64_t> box;
  /// The copy's swizzle of 16-byte pieces: 0 (none), or 32, 64, 128 bytes
  /// (rows landing in the swizzled layout a tensor-core product reads).
  int64_t swizzle = 0;
};

struct KernelManifest {
  std::string entry;        // the kernel's symbol in the image
  std::string target;       // sm_90a, sm_100a
  std::string image;        // file of the cubin (or PTX), relative to the manifest
  std::string op, schedule; // where it came from, for messages
  std::string mma;          // the schedule's matrix instruction (none, simt, wgmma, tcgen05)
  /// A matrix product rounds its operands below f32 (tensor-core tf32 /
  /// bf16, or 16-bit operands the op itself rounds to): the spec's looser
  /// state tolerance applies to the results.
  bool roundedOperands = false;
  int64_t threads = 0; // block size (x)
  int64_t dynamicSharedBytes = 0;
  /// Grid extents x, y, z as expressions: a number, a dim name, or
  /// [op, lhs, rhs] with op in add, sub, mul, div (floor), ceildiv.
  std::vector<json::Value> grid;
  /// Resident CTAs per SM: when not 0 the launch is 1-D, min(product of the
  /// grid extents, SMs x persistent) CTAs, each looping over grid points.
  int64_t persistent = 0;
  std::vector<TensorMapInfo> tensorMaps;
  /// Divisors the kernel divides by that depend only on dims (expressions
  /// like the grid's): each is one i64 argument after the kernel's own
  /// parameters, before the tensor maps, holding invariantDivisorArg's value
  /// (tile-invariant-divisors).
  std::vector<json::Value> divisors;
  KernelSignature signature;
  std::map<std::string, int64_t> consts;
  std::map<std::string, std::string> types; // dtype consts and params, e.g. STATE: "bf16"
  /// ptxas's report, when a cubin was made.
  int64_t registers = -1, staticSharedBytes = -1, spillBytes = -1;
  /// An op of several kernels (`entry` and `signature` are then the op's):
  /// its launch plan, and one manifest per launch (same image; their
  /// `image` is empty). Both empty for a single kernel.
  OpPlan plan;
  std::vector<KernelManifest> kernels;
  bool isOp() const { return !plan.empty(); }

  json::Value toJson() const;
  /// Reads a manifest; errors name the field.
  static bool fromJson(const json::Value &v, KernelManifest &out, std::string &error);
  static bool load(const std::string &path, KernelManifest &out, std::string &error);
};

/// Evaluates a grid expression for the given runtime dims.
bool evalGridExpr(const json::Value &expr, const std::map<std::string, int64_t> &dims, int64_t &out,
                  std::string &error);

/// The kernel argument for an invariant divisor `d` (1 <= d < 2^31):
/// m | (s << 32) with m = ceil(2^s / d) and s = 31 + ceil(log2 d), so that
/// x / d = (x * m) >> s for every 0 <= x < 2^31 (Granlund and Montgomery,
/// "Division by invariant integers using multiplication", theorem 4.2).
uint64_t invariantDivisorArg(int64_t d);

/// Evaluates each of `divisors` for `dims` into its kernel argument; errors
/// name the divisor whose value is out of range.
bool invariantDivisorArgs(const std::vector<json::Value> &divisors,
                          const std::map<std::string, int64_t> &dims, std::vector<uint64_t> &out,
                          std::string &error);

} // namespace kiln

#endif
