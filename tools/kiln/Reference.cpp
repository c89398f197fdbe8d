//===- Reference.cpp - any op checked against its float64 promotion -------===//
#include "tools/kiln/Reference.h"
#include "backends/cpu/CpuKernel.h"
#include "backends/runtime/Npy.h"
#include "dsl/SourceDiagnostics.h"
#include "ops/Harness.h"
#include "tools/kiln/Driver.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <set>

using namespace kiln;
namespace fs = std::filesystem;

static bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::BF16 || t == DType::F16 ||
         t == DType::F8E4M3;
}

int64_t HostArg::numel() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

std::vector<double> HostArg::values() const {
  if (!param.isView)
    return {scalar};
  std::vector<double> v(numel());
  for (int64_t i = 0; i < (int64_t)v.size(); ++i)
    v[i] = elementAt(bytes.data(), param.dtype, i);
  return v;
}

/// Fills an output before a run so that what the kernel leaves unwritten
/// shows: NaN for floats, a byte pattern for integers (each run its own, so
/// that two runs leaving the same element alone differ there).
static void poison(HostArg &a, uint8_t intPattern) {
  if (!isFloat(a.param.dtype)) {
    std::memset(a.bytes.data(), intPattern, a.bytes.size());
    return;
  }
  for (int64_t i = 0; i < a.numel(); ++i)
    setElement(a.bytes.data(), a.param.dtype, i, std::numeric_limits<double>::quiet_NaN());
}

static std::string joined(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

static std::string shapeText(const std::vector<int64_t> &shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

namespace {

/// Runtime dims as known so far: given, or fixed by a file's shape. A dim
/// `N+1` is one more than `N`.
struct Dims {
  std::map<std::string, int64_t> known;

  bool get(const std::string &name, int64_t &v) const {
    if (auto it = known.find(name); it != known.end())
      return v = it->second, true;
    size_t plus = name.find('+');
    if (plus == std::string::npos)
      return false;
    auto base = known.find(name.substr(0, plus));
    if (base == known.end())
      return false;
    v = base->second + std::stoll(name.substr(plus + 1));
    return true;
  }

  /// Records that dim `name` of `param` is `size`, read from `file`.
  bool set(const std::string &name, int64_t size, const std::string &file, const ParamInfo &param,
           std::string &error) {
    int64_t have;
    if (get(name, have) && have != size) {
      error = file + ": dim " + name + " of parameter '" + param.name + "' is " +
              std::to_string(size) + ", but " + name + " = " + std::to_string(have) +
              " (from --dims or another file)";
      return false;
    }
    known[name] = size;
    size_t plus = name.find('+');
    if (plus != std::string::npos) {
      int64_t base = size - std::stoll(name.substr(plus + 1));
      if (base < 0) {
        error = file + ": dim " + name + " of parameter '" + param.name + "' is " +
                std::to_string(size) + ", too small";
        return false;
      }
      return set(name.substr(0, plus), base, file, param, error);
    }
    return true;
  }
};

/// The file that gives parameter `p`, or "" when none does.
std::string inputFile(const DataOptions &data, const ParamInfo &p) {
  if (data.inputsDir.empty() || p.access == "out")
    return "";
  fs::path dir(data.inputsDir);
  // An inout's state before a run (`--save` writes it so) comes first.
  if (p.access == "inout" && fs::exists(dir / (p.name + ".in.npy")))
    return (dir / (p.name + ".in.npy")).string();
  return fs::exists(dir / (p.name + ".npy")) ? (dir / (p.name + ".npy")).string() : "";
}

/// Every .npy in the inputs directory names a parameter (NAME, NAME.in,
/// NAME.ref as `--save` writes them): a misspelt file is an error, not a
/// silently random input.
bool checkInputFiles(const KernelSignature &sig, const DataOptions &data, std::string &error) {
  std::error_code ec;
  if (!fs::is_directory(data.inputsDir, ec)) {
    error = "--inputs " + data.inputsDir + ": not a directory";
    return false;
  }
  std::vector<std::string> names;
  for (const ParamInfo &p : sig.params)
    names.push_back(p.name);
  for (const fs::directory_entry &e : fs::directory_iterator(data.inputsDir, ec)) {
    std::string file = e.path().filename().string();
    if (e.path().extension() != ".npy")
      continue;
    std::string stem = file.substr(0, file.size() - 4);
    for (const char *suffix : {".in", ".ref"})
      if (llvm::StringRef(stem).ends_with(suffix))
        stem.resize(stem.size() - std::strlen(suffix));
    if (sig.find(stem) < 0) {
      error =
          e.path().string() + ": names no parameter of " + sig.name + " (" + joined(names) + ")";
      return false;
    }
  }
  return true;
}

/// Reads parameter `p` from `file` into `a`, checking dtype, rank and dims.
bool readInput(const std::string &file, const ParamInfo &p, Dims &dims, HostArg &a,
               std::string &error) {
  NpyArray npy;
  if (!readNpy(file, npy, error))
    return false;
  if (!p.isView) {
    double v = 0;
    if (npy.numel() != 1 || !(npyHolds(npy.descr, DType::F32) || npyHolds(npy.descr, DType::F64) ||
                              npyHolds(npy.descr, DType::I32) || npyHolds(npy.descr, DType::I64))) {
      error = file + ": scalar parameter '" + p.name + "' needs one f4, f8, i4 or i8 element, " +
              "the file holds " + shapeText(npy.shape) + " of '" + npy.descr + "'";
      return false;
    }
    for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64})
      if (npyHolds(npy.descr, t))
        v = elementAt(npy.bytes.data(), t, 0);
    a.scalar = v;
    return true;
  }
  if (!npyHolds(npy.descr, p.dtype)) {
    error = file + ": parameter '" + p.name + "' is " + dtypeName(p.dtype) + " (npy '" +
            npyDescr(p.dtype) + "'" +
            (p.dtype == DType::BF16     ? " or ml_dtypes.bfloat16"
             : p.dtype == DType::F8E4M3 ? " (its bits) or ml_dtypes.float8_e4m3fn"
                                        : "") +
            "), the file holds '" + npy.descr + "'";
    return false;
  }
  if (npy.shape.size() != p.sizes.size()) {
    error = file + ": parameter '" + p.name + "' has " + std::to_string(p.sizes.size()) +
            " dims, the file's shape " + shapeText(npy.shape) + " has " +
            std::to_string(npy.shape.size());
    return false;
  }
  for (size_t d = 0; d < p.sizes.size(); ++d) {
    if (p.sizes[d] >= 0 && p.sizes[d] != npy.shape[d]) {
      error = file + ": dim " + std::to_string(d) + " of parameter '" + p.name + "' is " +
              std::to_string(p.sizes[d]) + ", the file's is " + std::to_string(npy.shape[d]);
      return false;
    }
    if (p.sizes[d] < 0 && !dims.set(p.dimNames[d], npy.shape[d], file, p, error))
      return false;
  }
  a.shape = npy.shape;
  a.bytes = std::move(npy.bytes);
  return true;
}

/// The range an integer parameter is drawn from: --range, else the source's.
bool rangeOf(const ParamInfo &p, const DataOptions &data, const Dims &dims, int64_t &lo,
             int64_t &hi, std::string &error) {
  if (auto it = data.ranges.find(p.name); it != data.ranges.end()) {
    lo = it->second.first, hi = it->second.second;
    return true;
  }
  if (!p.hasRange) {
    error = "integer parameter '" + p.name + "' needs values: a file " + p.name +
            ".npy in --inputs, --range " + p.name + "=LO:HI, or `range LO..HI` after its type " +
            "in the source";
    return false;
  }
  auto bound = [&](const ParamInfo::Bound &b, int64_t &v) {
    if (b.dim.empty())
      return v = b.value, true;
    if (dims.get(b.dim, v))
      return true;
    error = "the range of '" + p.name + "' uses dim " + b.dim + ", which no --dims or file gives";
    return false;
  };
  if (!bound(p.rangeLo, lo) || !bound(p.rangeHi, hi))
    return false;
  if (lo >= hi) {
    error = "the range of '" + p.name + "' is empty at these dims: " + std::to_string(lo) + ".." +
            std::to_string(hi);
    return false;
  }
  return true;
}

/// The dim an `offsets` input counts into, at these dims.
bool offsetsTotal(const ParamInfo &p, const Dims &dims, int64_t &total, std::string &error) {
  if (dims.get(p.offsetsOf, total))
    return true;
  error = "the offsets '" + p.name + "' count into dim " + p.offsetsOf +
          ", which no --dims, file or check line gives";
  return false;
}

/// A packed batch's offsets into `total` tokens: cut at N - 1 random points
/// (empty sequences included), in order, 0 first and `total` last.
void drawOffsets(HostArg &a, int64_t total, std::mt19937_64 &rng) {
  std::uniform_int_distribution<int64_t> cut(0, total);
  std::vector<int64_t> points(a.numel(), total);
  points[0] = 0;
  for (int64_t k = 1; k + 1 < a.numel(); ++k)
    points[k] = cut(rng);
  std::sort(points.begin(), points.end());
  a.bytes.assign(a.numel() * dtypeBytes(a.param.dtype), 0);
  for (int64_t k = 0; k < a.numel(); ++k)
    setElement(a.bytes.data(), a.param.dtype, k, (double)points[k]);
}

/// An integer input read from a file, against what its parameter declares:
/// offsets run from 0 to their dim and never decrease; a ranged input (the
/// source's range or --range) stays in it. The host sees these values, so a
/// slot past a pool is an error here, where on a GPU only the kernel's
/// masking stands between it and memory it does not own.
bool checkFileValues(const ParamInfo &p, const HostArg &a, const DataOptions &data,
                     const Dims &dims, std::string &error) {
  auto value = [&](int64_t k) { return (int64_t)elementAt(a.bytes.data(), p.dtype, k); };
  auto bad = [&](int64_t k, const std::string &why) {
    error = inputFile(data, p) + ": element " + std::to_string(k) + " of '" + p.name + "' is " +
            std::to_string(value(k)) + why;
    return false;
  };
  if (!p.offsetsOf.empty()) {
    int64_t total = 0;
    if (!offsetsTotal(p, dims, total, error))
      return false;
    for (int64_t k = 0; k < a.numel(); ++k)
      if ((k == 0 && value(k) != 0) || (k && value(k) < value(k - 1)) ||
          (k + 1 == a.numel() && value(k) != total))
        return bad(k, "; offsets run from 0 to " + p.offsetsOf + " = " + std::to_string(total) +
                          " and never decrease");
    return true;
  }
  if (isFloat(p.dtype) || !p.isView || !(p.hasRange || data.ranges.count(p.name)))
    return true;
  int64_t lo = 0, hi = 0;
  if (!rangeOf(p, data, dims, lo, hi, error))
    return false;
  for (int64_t k = 0; k < a.numel(); ++k)
    if (value(k) < lo || value(k) >= hi)
      return bad(k, ", outside its range " + std::to_string(lo) + ".." + std::to_string(hi) +
                        " (the last excluded)");
  return true;
}

} // namespace

bool kiln::makeArguments(const KernelSignature &sig, std::map<std::string, int64_t> given,
                         const std::map<std::string, int64_t> &fallback, const DataOptions &data,
                         uint64_t seed, std::vector<HostArg> &out, std::string &error) {
  std::set<std::string> runtime(sig.runtimeDims.begin(), sig.runtimeDims.end());
  for (auto &[name, v] : given)
    if (!runtime.count(name)) {
      std::vector<std::string> list;
      for (const std::string &d : sig.runtimeDims)
        if (d.find('+') == std::string::npos)
          list.push_back(d);
      error = "--dims " + name + ": " + sig.name + " has no runtime dim '" + name + "' (" +
              (list.empty() ? std::string("it has none") : "it has " + joined(list)) + ")";
      return false;
    }
  for (auto &[name, r] : data.ranges) {
    int i = sig.find(name);
    if (i < 0) {
      error = "--range " + name + ": " + sig.name + " has no parameter '" + name + "'";
      return false;
    }
    if (isFloat(sig.params[i].dtype)) {
      error = "--range " + name + ": '" + name + "' is " + dtypeName(sig.params[i].dtype) +
              "; a range is for integer inputs (floats are drawn normal, or read with --inputs)";
      return false;
    }
  }
  if (!data.inputsDir.empty() && !checkInputFiles(sig, data, error))
    return false;
  Dims dims{std::move(given)};
  out.assign(sig.params.size(), HostArg());
  std::vector<bool> fromFile(sig.params.size());
  for (size_t i = 0; i < sig.params.size(); ++i) {
    out[i].param = sig.params[i];
    std::string file = inputFile(data, sig.params[i]);
    if (!file.empty() && !readInput(file, sig.params[i], dims, out[i], error))
      return false;
    fromFile[i] = !file.empty();
  }
  for (auto &[name, v] : fallback)
    if (runtime.count(name))
      dims.known.emplace(name, v);
  // Every other tensor's shape from the dims.
  std::vector<std::string> missing;
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const ParamInfo &p = sig.params[i];
    if (!p.isView || fromFile[i])
      continue;
    out[i].shape.clear();
    for (size_t d = 0; d < p.sizes.size(); ++d) {
      int64_t n = p.sizes[d];
      if (n < 0 && !dims.get(p.dimNames[d], n)) {
        std::string base = p.dimNames[d].substr(0, p.dimNames[d].find('+'));
        if (!llvm::is_contained(missing, base))
          missing.push_back(base);
      }
      out[i].shape.push_back(n);
    }
  }
  if (!missing.empty()) {
    std::string eg;
    for (const std::string &m : missing)
      eg += (eg.empty() ? "" : ",") + m + "=...";
    error = sig.name + " needs runtime dim" + (missing.size() > 1 ? "s " : " ") + joined(missing) +
            ": give --dims " + eg + " (or files in --inputs that fix them)";
    return false;
  }
  // Each tensor, the copy the check keeps and the reference's f64 copy.
  double bytes = 0;
  for (size_t i = 0; i < sig.params.size(); ++i) {
    double n = 1;
    for (int64_t d : out[i].shape)
      n *= (double)d;
    bytes += sig.params[i].isView ? n * (2.0 * dtypeBytes(sig.params[i].dtype) + 8) : 0;
  }
  if (!fitsHostMemory(bytes, "the run at " + describeDims(dims.known), error))
    return false;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const ParamInfo &p = sig.params[i];
    HostArg &a = out[i];
    bool integer = !isFloat(p.dtype);
    int64_t lo = 0, hi = 0;
    if (fromFile[i]) {
      if (!checkFileValues(p, a, data, dims, error))
        return false;
      continue;
    }
    if (!p.offsetsOf.empty()) {
      int64_t total = 0;
      if (!offsetsTotal(p, dims, total, error))
        return false;
      drawOffsets(a, total, rng);
      continue;
    }
    if (integer && p.access != "out" && !rangeOf(p, data, dims, lo, hi, error))
      return false;
    std::uniform_int_distribution<int64_t> uniform(lo, std::max(lo, hi - 1));
    auto draw = [&]() { return integer ? (double)uniform(rng) : normal(rng); };
    if (!p.isView) {
      a.scalar = draw();
      continue;
    }
    a.bytes.assign(a.numel() * dtypeBytes(p.dtype), 0);
    if (p.access == "out") {
      poison(a, 0xa5);
      continue;
    }
    for (int64_t k = 0; k < a.numel(); ++k)
      setElement(a.bytes.data(), p.dtype, k, draw());
  }
  return true;
}

std::vector<ArgValue> kiln::argValues(std::vector<HostArg> &args) {
  std::vector<ArgValue> values;
  for (HostArg &a : args)
    values.push_back(a.param.isView ? ArgValue::tensor(a.bytes.data(), a.shape, a.param.dtype)
                                    : ArgValue::number(a.scalar));
  return values;
}

double kiln::defaultTolerance(DType t, bool roundedOperands) {
  double tol = 0;
  switch (t) {
  case DType::F64:
    tol = 1e-12;
    break;
  case DType::F32:
    tol = 1e-5;
    break;
  case DType::F16:
    tol = 4e-3;
    break;
  case DType::BF16:
    tol = 3e-2;
    break;
  case DType::F8E4M3: // 3 mantissa bits: one rounding is up to 2^-4
    tol = 1e-1;
    break;
  default:
    return 0;
  }
  return roundedOperands ? std::max(tol, 1e-2) : tol;
}

/// The relative error of every out / inout argument of `got` against `ref`
/// (both after their runs), with the parameter's tolerance or the default.
static std::vector<CheckResult> checkOutputs(const std::vector<HostArg> &got,
                                             const std::vector<HostArg> &ref,
                                             bool roundedOperands) {
  std::vector<CheckResult> checks;
  for (size_t i = 0; i < got.size(); ++i) {
    const ParamInfo &p = got[i].param;
    if (!p.isView || p.access == "in")
      continue;
    double tol = p.tolerance > 0 ? p.tolerance : defaultTolerance(p.dtype, roundedOperands);
    checks.push_back(compare(p.name, got[i].values(), ref[i].values(), tol));
  }
  return checks;
}

/// The float64 reference's outputs on `inputs` (a build's arguments before
/// its run): compiles `tilePath` promoted, runs it on the CPU.
static bool runReference(const std::string &tilePath, const std::string &schedulePath,
                         const std::map<std::string, lang::ExternalValue> &constants,
                         const std::vector<HostArg> &inputs, std::vector<HostArg> &ref,
                         llvm::raw_ostream &errs) {
  auto ctx = makeContext();
  SourceDiagnostics diags(*ctx, errs);
  Compiled c;
  if (!compileOp(*ctx, tilePath, schedulePath, constants, c, errs, nullptr,
                 /*float64Reference=*/true)) {
    errs << "kiln: error: the op's float64 reference (every float type promoted to f64) does "
            "not compile\n";
    return false;
  }
  std::string error;
  auto kernel = CpuKernel::compile(*c.module, error);
  if (!kernel) {
    errs << "kiln: error: the op's float64 reference: " << error << "\n";
    return false;
  }
  const KernelSignature &sig = kernel->signature();
  ref.assign(inputs.size(), HostArg());
  for (size_t i = 0; i < inputs.size(); ++i) {
    HostArg &r = ref[i];
    r.param = sig.params[i];
    r.shape = inputs[i].shape;
    r.scalar = inputs[i].scalar;
    if (!r.param.isView)
      continue;
    r.bytes.assign(r.numel() * dtypeBytes(r.param.dtype), 0);
    if (r.param.access == "out") {
      poison(r, 0x5a);
      continue;
    }
    std::vector<double> v = inputs[i].values();
    for (int64_t k = 0; k < r.numel(); ++k)
      setElement(r.bytes.data(), r.param.dtype, k, v[k]);
  }
  std::vector<ArgValue> args = argValues(ref);
  if (!kernel->launch(args, error)) {
    errs << "kiln: error: the op's float64 reference: " << error << "\n";
    return false;
  }
  return true;
}

/// Writes every argument as DIR/NAME.npy (an inout also as NAME.in.npy, as
/// it was before the run) and each output's reference as NAME.ref.npy.
static bool saveArguments(const std::string &dir, const std::vector<HostArg> &before,
                          const std::vector<HostArg> &after, const std::vector<HostArg> &ref,
                          std::string &error) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  auto write = [&](const std::string &name, const HostArg &a) {
    std::string path = (fs::path(dir) / (name + ".npy")).string();
    if (a.param.isView)
      return writeNpy(path, a.param.dtype, a.shape, a.bytes.data(), error);
    double v = a.scalar;
    int64_t n = (int64_t)v;
    return isFloat(a.param.dtype) ? writeNpy(path, DType::F64, {}, &v, error)
                                  : writeNpy(path, DType::I64, {}, &n, error);
  };
  for (size_t i = 0; i < after.size(); ++i) {
    const ParamInfo &p = after[i].param;
    if (!write(p.name, p.access == "in" || !p.isView ? before[i] : after[i]))
      return false;
    if (p.access == "inout" && !write(p.name + ".in", before[i]))
      return false;
    if (p.isView && p.access != "in" && !write(p.name + ".ref", ref[i]))
      return false;
  }
  return true;
}

/// The outputs against the user's arrays DIR/NAME.npy (any float or
/// integer dtype, the output's shape).
static bool checkExpected(const std::string &dir, const std::vector<HostArg> &got,
                          bool roundedOperands, std::vector<CheckResult> &checks,
                          std::string &error) {
  std::vector<std::string> outputs;
  size_t before = checks.size();
  for (const HostArg &a : got) {
    const ParamInfo &p = a.param;
    if (!p.isView || p.access == "in")
      continue;
    outputs.push_back(p.name);
    std::string path = (fs::path(dir) / (p.name + ".npy")).string();
    if (!fs::exists(path))
      continue;
    NpyArray npy;
    if (!readNpy(path, npy, error))
      return false;
    DType t = DType::F32;
    bool known = false;
    for (DType c : {DType::F32, DType::F64, DType::F16, DType::I8, DType::I32, DType::I64})
      if (npyHolds(npy.descr, c))
        t = c, known = true;
    for (DType c : {DType::BF16, DType::F8E4M3}) // their bits: only where the output is one
      if (p.dtype == c && npyHolds(npy.descr, c))
        t = c, known = true;
    if (!known) {
      error = path + ": output '" + p.name + "' cannot be compared with dtype '" + npy.descr + "'";
      return false;
    }
    if (npy.shape != a.shape) {
      error = path + ": output '" + p.name + "' has shape " + shapeText(a.shape) + ", the file " +
              shapeText(npy.shape);
      return false;
    }
    std::vector<double> want(npy.numel());
    for (int64_t k = 0; k < npy.numel(); ++k)
      want[k] = elementAt(npy.bytes.data(), t, k);
    double tol = p.tolerance > 0 ? p.tolerance : defaultTolerance(p.dtype, roundedOperands);
    checks.push_back(compare(p.name + " vs --expect", a.values(), want, tol));
  }
  if (checks.size() == before) {
    error = "--expect " + dir + ": no NAME.npy for any output (" + joined(outputs) + ")";
    return false;
  }
  return true;
}

bool kiln::runAgainstReference(const std::string &tilePath, const std::string &schedulePath,
                               const std::map<std::string, lang::ExternalValue> &constants,
                               const KernelSignature &sig, bool roundedOperands,
                               const RunConfig &cfg, const DataOptions &data,
                               const Launcher &launch, std::vector<CheckResult> &checks,
                               llvm::raw_ostream &errs) {
  std::vector<HostArg> args, ref;
  std::string error;
  auto shapes = checkShapesOf(tilePath);
  if (!makeArguments(sig, cfg.dims, shapes.empty() ? std::map<std::string, int64_t>{} : shapes[0],
                     data, cfg.seed, args, error)) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  const std::vector<HostArg> before = args;
  std::vector<ArgValue> values = argValues(args);
  if (!launch(values, error)) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  if (!runReference(tilePath, schedulePath, constants, before, ref, errs))
    return false;
  checks = checkOutputs(args, ref, roundedOperands);
  if (!data.expectDir.empty() &&
      !checkExpected(data.expectDir, args, roundedOperands, checks, error)) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  if (!data.saveDir.empty() && !saveArguments(data.saveDir, before, args, ref, error)) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  return true;
}

std::vector<std::map<std::string, int64_t>> kiln::checkShapesOf(const std::string &tilePath) {
  std::string text, error, ignored;
  llvm::raw_string_ostream quiet(ignored);
  lang::Declarations decls;
  if (!readFile(tilePath, text, error) || !lang::scanDeclarations(tilePath, text, decls, quiet))
    return {};
  return decls.checkShapes;
}
