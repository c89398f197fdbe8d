//===- Signature.cpp - a kernel's parameters -----------------------------===//
#include "backends/runtime/Signature.h"

using namespace kiln;

size_t kiln::dtypeBytes(DType t) {
  switch (t) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::I8:
  case DType::F8E4M3:
    return 1;
  }
  return 0;
}

/// CUtensorMapDataType of an element type. A copy moves bits, so 8-bit
/// integers travel as UINT8 whatever their sign.
int kiln::tensorMapDataType(DType t) {
  switch (t) {
  case DType::I8:
  case DType::F8E4M3:
    return 0; // UINT8
  case DType::I32:
    return 3; // INT32
  case DType::I64:
    return 5; // INT64
  case DType::F16:
    return 6; // FLOAT16
  case DType::F32:
    return 7; // FLOAT32
  case DType::F64:
    return 8; // FLOAT64
  case DType::BF16:
    return 9; // BFLOAT16
  }
  return 7;
}

const char *kiln::cudaTypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "float";
  case DType::BF16:
    return "__nv_bfloat16";
  case DType::F16:
    return "__half";
  case DType::F64:
    return "double";
  case DType::I8:
    return "int8_t";
  case DType::I32:
    return "int32_t";
  case DType::I64:
    return "int64_t";
  case DType::F8E4M3:
    return "__nv_fp8_e4m3";
  }
  return "?";
}

const char *kiln::dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::F64:
    return "f64";
  case DType::I8:
    return "i8";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::F8E4M3:
    return "f8e4m3";
  }
  return "?";
}

int KernelSignature::find(const std::string &n) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == n)
      return i;
  return -1;
}

bool kiln::bindArguments(const KernelSignature &sig, const std::vector<ArgValue> &args,
                         std::map<std::string, int64_t> &dims, std::string &error) {
  if (args.size() != sig.params.size()) {
    error = "kernel '" + sig.name + "' takes " + std::to_string(sig.params.size()) +
            " arguments, got " + std::to_string(args.size());
    return false;
  }
  std::map<std::string, std::string> boundBy;
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamInfo &p = sig.params[i];
    const ArgValue &a = args[i];
    if (!p.isView)
      continue;
    std::string where = "argument '" + p.name + "'";
    if (!a.data) {
      error = where + " is a tensor but no buffer was given";
      return false;
    }
    if (a.dtype != p.dtype) {
      error = where + " must be " + dtypeName(p.dtype) + ", got " + dtypeName(a.dtype);
      return false;
    }
    if (a.shape.size() != p.sizes.size()) {
      error = where + " must have " + std::to_string(p.sizes.size()) + " dims, got " +
              std::to_string(a.shape.size());
      return false;
    }
    for (size_t d = 0; d < p.sizes.size(); ++d) {
      if (p.sizes[d] >= 0) {
        if (a.shape[d] != p.sizes[d]) {
          error = where + " dim " + std::to_string(d) + " must be " + std::to_string(p.sizes[d]) +
                  ", got " + std::to_string(a.shape[d]);
          return false;
        }
        continue;
      }
      const std::string &n = p.dimNames[d];
      if (a.shape[d] <= 0) {
        error = where + " dim " + std::to_string(d) + " (" + n + ") must be positive, got " +
                std::to_string(a.shape[d]);
        return false;
      }
      auto it = dims.find(n);
      if (it == dims.end()) {
        dims[n] = a.shape[d];
        boundBy[n] = p.name;
      } else if (it->second != a.shape[d]) {
        error = where + " dim " + std::to_string(d) + " (" + n + ") is " +
                std::to_string(a.shape[d]) + " but '" + boundBy[n] + "' gave " + n + " = " +
                std::to_string(it->second);
        return false;
      }
    }
  }
  // A dim named `N+c` is fixed by its tensor like any other and must agree
  // with N; it also fixes N when no tensor has a plain N dim.
  for (const std::string &n : sig.runtimeDims) {
    size_t plus = n.find('+');
    if (plus == std::string::npos || !dims.count(n))
      continue;
    std::string base = n.substr(0, plus);
    int64_t offset = std::stoll(n.substr(plus + 1));
    auto it = dims.find(base);
    if (it == dims.end()) {
      if (dims[n] - offset <= 0) {
        error = "argument '" + boundBy[n] + "' gives " + n + " = " + std::to_string(dims[n]) +
                ", so " + base + " = " + std::to_string(dims[n] - offset) + " (must be positive)";
        return false;
      }
      dims[base] = dims[n] - offset;
      boundBy[base] = boundBy[n];
    } else if (it->second + offset != dims[n]) {
      error = "argument '" + boundBy[n] + "' gives " + n + " = " + std::to_string(dims[n]) +
              " but '" + boundBy[base] + "' gave " + base + " = " + std::to_string(it->second);
      return false;
    }
  }
  for (const std::string &n : sig.runtimeDims)
    if (!dims.count(n)) {
      error = "no tensor argument fixes the dim '" + n + "'";
      return false;
    }
  return true;
}

bool kiln::dimsFitGpuKernels(const std::map<std::string, int64_t> &dims, std::string &error) {
  for (auto &[name, value] : dims)
    if (value > kLargestDim) {
      error = "dim " + name + " = " + std::to_string(value) +
              " exceeds 2^31 - 1, the largest a GPU kernel divides in 32 bits";
      return false;
    }
  return true;
}

bool kiln::tmaStridesFit(const std::string &param, const std::vector<int64_t> &shape,
                         int64_t elemBytes, std::string &error) {
  int64_t stride = elemBytes;
  for (size_t i = shape.size(); i-- > 1;) {
    stride *= shape[i];
    if (stride % 16 != 0) {
      std::string dims;
      for (int64_t d : shape)
        dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      error = "argument '" + param + "' [" + dims + "] is copied by TMA, whose strides must be " +
              "multiples of 16 bytes; its dim " + std::to_string(i - 1) + " steps " +
              std::to_string(stride) + " bytes";
      return false;
    }
  }
  return true;
}
