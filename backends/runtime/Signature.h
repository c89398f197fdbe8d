//===- Signature.h - a kernel's parameters, for binding arguments -*- C++ -*-===//
//
// Plain C++ (no MLIR): the GPU runner links it on machines without LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_RUNTIME_SIGNATURE_H
#define KILN_BACKENDS_RUNTIME_SIGNATURE_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln {

/// Element types of kernel parameters as the host sees them.
/// F8E4M3: e4m3 "fn" (no infinities; S.1111.111 is NaN), a storage type.
enum class DType { F32, BF16, F16, F64, I8, I32, I64, F8E4M3 };
size_t dtypeBytes(DType t);
const char *dtypeName(DType t);
/// The CUDA C++ type of an element: float, __nv_bfloat16, int32_t, ...
const char *cudaTypeName(DType t);
/// The CUtensorMapDataType value a TMA copy of these elements uses (the
/// runtime's encoding and the generated launcher header's agree on it).
int tensorMapDataType(DType t);

struct ParamInfo {
  std::string name;
  bool isView = false;
  std::string access; // in / out / inout (views)
  DType dtype = DType::F32;
  /// Per dim: a fixed size, or (size < 0) the runtime dim `dimNames[i]`.
  std::vector<int64_t> sizes;
  std::vector<std::string> dimNames;
  /// An output's relative error allowed against the op's float64 reference
  /// (`tolerance` in the source); 0: the default for its element type.
  double tolerance = 0;
  /// An integer input's `range lo..hi` in the source: what `kiln run` draws
  /// it from when no file gives it. A bound is a number or a runtime dim.
  struct Bound {
    int64_t value = 0;
    std::string dim;
  };
  bool hasRange = false;
  Bound rangeLo, rangeHi;
  std::string offsetsOf; // `offsets T`: a packed batch's offsets into dim T
};

struct KernelSignature {
  std::string name;
  std::vector<std::string> runtimeDims;
  std::vector<ParamInfo> params;
  /// Index of the parameter called `name`, or -1.
  int find(const std::string &name) const;
};

/// One argument of a launch: a host tensor (pointer + shape) or a scalar.
struct ArgValue {
  void *data = nullptr;
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  double scalar = 0;
  static ArgValue tensor(void *p, std::vector<int64_t> s, DType t) {
    return {p, std::move(s), t, 0};
  }
  static ArgValue number(double v) { return {nullptr, {}, DType::F32, v}; }
};

/// Checks arguments against the signature and solves the runtime dims.
/// On a mismatch returns false with a message naming the parameter and dim.
bool bindArguments(const KernelSignature &sig, const std::vector<ArgValue> &args,
                   std::map<std::string, int64_t> &dims, std::string &error);

/// The largest dim GPU kernels take: they divide dims and grid coordinates
/// in 32 bits (tile-narrow-index-division). Command lines and data files are
/// held to it too.
inline constexpr int64_t kLargestDim = 2147483647;

/// Whether every dim is at most kLargestDim. On a dim too large returns
/// false with a message naming it.
bool dimsFitGpuKernels(const std::map<std::string, int64_t> &dims, std::string &error);

/// Whether a TMA engine can copy from a contiguous tensor of `shape`
/// (outermost dim first) of `elemBytes` elements: cuTensorMapEncodeTiled
/// needs every stride but the innermost's a multiple of 16 bytes. Otherwise
/// returns false with a message naming the argument, its shape and the
/// stride (a bf16 [M, K] with K = 300 has rows of 600 bytes).
bool tmaStridesFit(const std::string &param, const std::vector<int64_t> &shape, int64_t elemBytes,
                   std::string &error);

} // namespace kiln

#endif
