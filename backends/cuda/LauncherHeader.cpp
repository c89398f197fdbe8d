//===- LauncherHeader.cpp - a host launcher for generated CUDA ------------===//
//
// The header's launch function is the runtime's launch (GpuLauncher.cpp)
// written out for one op: the same grid expressions, persistent CTA count,
// divisor arguments, tensor maps and order of launches, printed from the
// manifest as C++ so that nothing is interpreted at run time.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/LauncherHeader.h"

#include "llvm/Support/Path.h"

#include <regex>
#include <set>

using namespace kiln;

std::string kiln::cIdentifier(const std::string &name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum((unsigned char)c) || c == '_')
      out += c;
    else if (c == '+')
      out += "_plus_";
    else if (c == '-')
      out += "_minus_";
    else if (c == '*')
      out += "_times_";
    else if (c == '/')
      out += "_over_";
    else if (c != ' ')
      out += '_';
  }
  return out.empty() || std::isdigit((unsigned char)out[0]) ? "p" + out : out;
}

/// The C++ type of parameter `p` in a kernel or launcher signature.
static std::string paramType(const ParamInfo &p) {
  std::string elem = cudaTypeName(p.dtype);
  if (!p.isView)
    return elem;
  return (p.access == "in" ? "const " : "") + elem + " *__restrict__";
}

CudaKernelParams kiln::cudaKernelParams(const KernelManifest &k) {
  CudaKernelParams p;
  auto add = [&](const std::string &name, std::string type) {
    p.names.push_back(cIdentifier(name));
    p.types.push_back(std::move(type));
  };
  for (const std::string &d : k.signature.runtimeDims)
    add(d, "int64_t");
  for (const ParamInfo &param : k.signature.params)
    add(param.name, paramType(param));
  for (size_t i = 0; i < k.divisors.size(); ++i)
    add("divisor" + std::to_string(i), "int64_t");
  for (size_t t = 0; t < k.tensorMaps.size(); ++t)
    add("tmap_" + k.signature.params[k.tensorMaps[t].param].name + std::to_string(t),
        "const __grid_constant__ CUtensorMap");
  return p;
}

namespace {

/// The CUtensorMapDataType enumerator of tensorMapDataType's value.
const char *tensorMapType(DType t) {
  static const char *kNames[] = {
      "CU_TENSOR_MAP_DATA_TYPE_UINT8",   "CU_TENSOR_MAP_DATA_TYPE_UINT16",
      "CU_TENSOR_MAP_DATA_TYPE_UINT32",  "CU_TENSOR_MAP_DATA_TYPE_INT32",
      "CU_TENSOR_MAP_DATA_TYPE_UINT64",  "CU_TENSOR_MAP_DATA_TYPE_INT64",
      "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
      "CU_TENSOR_MAP_DATA_TYPE_FLOAT64", "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16"};
  return kNames[tensorMapDataType(t)];
}

/// A shape as text: bf16[B, 1, H, 128].
std::string shapeText(const ParamInfo &p) {
  std::string s = std::string(dtypeName(p.dtype)) + "[";
  for (size_t i = 0; i < p.sizes.size(); ++i)
    s += (i ? ", " : "") + (p.sizes[i] < 0 ? p.dimNames[i] : std::to_string(p.sizes[i]));
  return s + "]";
}

class HeaderPrinter {
public:
  HeaderPrinter(const KernelManifest &m, llvm::raw_ostream &os) : m(m), os(os) {}
  void print(const std::string &cudaFile, const std::vector<std::string> &banner);

private:
  const KernelManifest &m;
  llvm::raw_ostream &os;
  /// Dims the caller gives (fields of Dims) and those derived from them.
  std::vector<std::string> given;
  std::map<std::string, std::string> derived; // name -> C++ expression

  const KernelSignature &opSignature() const { return m.signature; }
  std::vector<OpPlan::Launch> launches() const {
    if (m.isOp())
      return m.plan.launches;
    OpPlan::Launch only;
    only.kernel = m.entry;
    for (size_t i = 0; i < m.signature.params.size(); ++i)
      only.args.push_back((int64_t)i);
    return {only};
  }
  const KernelManifest &kernelOf(size_t step) const { return m.isOp() ? m.kernels[step] : m; }
  static std::string dimVar(const std::string &name) { return "dim_" + cIdentifier(name); }
  std::string expr(const json::Value &e) const;
  void classifyDims();
  /// Every dim as a local `dim_NAME` of `type`: given, derived, aligned.
  void printDimLocals(const char *type);
  void printScratchOffsets();
  /// `tracked`: the launcher tracks whether each launch ran (`ran`), as an
  /// early launch (OpPlan::Launch::early) starts early only after one that did.
  void printStep(size_t step, const OpPlan::Launch &launch, bool tracked);
  std::string kernelArgument(const OpPlan::Launch &launch, size_t param) const;
};

std::string HeaderPrinter::expr(const json::Value &e) const {
  if (e.kind == json::Value::Number)
    return std::to_string(e.asInt());
  if (e.kind == json::Value::String)
    return dimVar(e.string);
  const std::string &op = e.array[0].string;
  std::string a = expr(e.array[1]), b = expr(e.array[2]);
  if (op == "add")
    return "(" + a + " + " + b + ")";
  if (op == "sub")
    return "(" + a + " - " + b + ")";
  if (op == "mul")
    return "(" + a + " * " + b + ")";
  if (op == "div")
    return "(" + a + " / " + b + ")";
  if (op == "ceildiv")
    return "((" + a + " + " + b + " - 1) / " + b + ")";
  if (op == "min")
    return "(" + a + " < " + b + " ? " + a + " : " + b + ")";
  return "(" + a + " > " + b + " ? " + a + " : " + b + ")";
}

void HeaderPrinter::classifyDims() {
  // `X+1` where X is a dim of the op: derived, not asked for.
  static const std::regex offset(R"(^([A-Za-z_]\w*)\s*([+-])\s*(\d+)$)");
  const std::vector<std::string> &dims = opSignature().runtimeDims;
  for (const std::string &d : dims) {
    std::smatch match;
    if (std::regex_match(d, match, offset) &&
        std::find(dims.begin(), dims.end(), match[1].str()) != dims.end())
      derived[d] = "(" + dimVar(match[1]) + " " + match[2].str() + " " + match[3].str() + ")";
    else
      given.push_back(d);
  }
}

std::string HeaderPrinter::kernelArgument(const OpPlan::Launch &launch, size_t param) const {
  int64_t source = launch.args[param];
  if (source >= 0)
    return cIdentifier(opSignature().params[source].name);
  return "scratch_" + cIdentifier(m.plan.scratch[-1 - source].name);
}

void HeaderPrinter::printDimLocals(const char *type) {
  for (const std::string &g : given)
    os << "  [[maybe_unused]] " << type << " " << dimVar(g) << " = d." << cIdentifier(g) << ";\n";
  for (auto &[name, e] : derived)
    os << "  [[maybe_unused]] " << type << " " << dimVar(name) << " = " << e << ";\n";
  for (const OpPlan::AlignedDim &a : m.plan.alignedDims)
    os << "  [[maybe_unused]] " << type << " " << dimVar(a.name) << " = (" << dimVar(a.of) << " + "
       << a.multiple << " - 1) / " << a.multiple << " * " << a.multiple << ";\n";
}

void HeaderPrinter::printScratchOffsets() {
  os << "/// Where each scratch tensor lies in the caller's scratch buffer (256-byte\n"
        "/// aligned), and the buffer's size.\n"
        "inline size_t scratch_offsets(const Dims &d, size_t *offsets) {\n";
  printDimLocals("const int64_t");
  os << "  size_t at = 0;\n";
  for (size_t i = 0; i < m.plan.scratch.size(); ++i) {
    const ParamInfo &s = m.plan.scratch[i];
    std::string n = std::to_string(dtypeBytes(s.dtype));
    for (size_t j = 0; j < s.sizes.size(); ++j)
      n += " * (size_t)" + (s.sizes[j] < 0 ? dimVar(s.dimNames[j]) : std::to_string(s.sizes[j]));
    os << "  offsets[" << i << "] = at; // " << s.name << ": " << shapeText(s) << "\n";
    os << "  at += (" << n << " + 255) / 256 * 256;\n";
  }
  os << "  return at;\n}\n";
}

void HeaderPrinter::printStep(size_t step, const OpPlan::Launch &launch, bool tracked) {
  const KernelManifest &k = kernelOf(step);
  std::string s = std::to_string(step);
  os << "  { // " << k.entry << "\n";
  if (launch.early)
    os << "    const bool after = ran; // the launch before ran on `stream`\n";
  if (tracked)
    os << "    ran = false;\n";
  // Grid extents; an empty grid has nothing to do.
  os << "    int64_t grid[3] = {1, 1, 1};\n";
  for (size_t i = 0; i < k.grid.size() && i < 3; ++i)
    os << "    grid[" << i << "] = " << expr(k.grid[i]) << ";\n";
  os << "    if (grid[0] > 0 && grid[1] > 0 && grid[2] > 0) {\n";
  os << "      if (grid[0] > 2147483647 || grid[1] > 65535 || grid[2] > 65535)\n"
        "        return cudaErrorInvalidConfiguration;\n";
  if (k.persistent || launch.overlap)
    os << "      int64_t ctas = grid[0] * grid[1] * grid[2];\n";
  if (k.persistent)
    os << "      // Persistent: as many CTAs as stay resident, looping over the grid.\n"
          "      ctas = ctas < (int64_t)sms * "
       << k.persistent << " ? ctas : (int64_t)sms * " << k.persistent
       << ";\n      grid[0] = ctas;\n      grid[1] = grid[2] = 1;\n";
  for (size_t i = 0; i < k.divisors.size(); ++i) {
    os << "      const int64_t divisor_value" << i << " = " << expr(k.divisors[i]) << ";\n";
    os << "      if (divisor_value" << i << " < 1 || divisor_value" << i
       << " >= (int64_t(1) << 31))\n        return cudaErrorInvalidValue;\n";
    os << "      int64_t divisor" << i << " = (int64_t)detail::divisor_arg(divisor_value" << i
       << ");\n";
  }
  for (size_t t = 0; t < k.tensorMaps.size(); ++t) {
    const TensorMapInfo &info = k.tensorMaps[t];
    const ParamInfo &p = k.signature.params[info.param];
    size_t rank = p.sizes.size();
    std::string dims, strides, box, one;
    std::string stride = std::to_string(dtypeBytes(p.dtype));
    for (size_t i = 0; i < rank; ++i) {
      size_t d = rank - 1 - i; // the map lists dims innermost first
      std::string extent = p.sizes[d] < 0 ? dimVar(p.dimNames[d]) : std::to_string(p.sizes[d]);
      dims += (i ? ", " : "") + std::string("(cuuint64_t)") + extent;
      if (i > 0)
        strides += (i > 1 ? ", " : "") + std::string("(cuuint64_t)(") + stride + ")";
      stride += " * " + extent;
      box += (i ? ", " : "") + std::to_string(info.box[d]);
      one += i ? ", 1" : "1";
    }
    std::string swizzle = info.swizzle == 128  ? "CU_TENSOR_MAP_SWIZZLE_128B"
                          : info.swizzle == 64 ? "CU_TENSOR_MAP_SWIZZLE_64B"
                          : info.swizzle == 32 ? "CU_TENSOR_MAP_SWIZZLE_32B"
                                               : "CU_TENSOR_MAP_SWIZZLE_NONE";
    std::string name = "tmap" + std::to_string(t);
    os << "      CUtensorMap " << name << "; // " << p.name << " by boxes of ";
    for (size_t i = 0; i < info.box.size(); ++i)
      os << (i ? " x " : "") << info.box[i];
    os << "\n      {\n";
    os << "        const cuuint64_t dims[" << rank << "] = {" << dims << "};\n";
    if (rank > 1)
      os << "        const cuuint64_t strides[" << rank - 1 << "] = {" << strides << "};\n";
    os << "        const cuuint32_t box[" << rank << "] = {" << box << "}, steps[" << rank
       << "] = {" << one << "};\n";
    os << "        if (cuTensorMapEncodeTiled(&" << name << ", " << tensorMapType(p.dtype) << ", "
       << rank << ", (void *)" << kernelArgument(launch, info.param) << ", dims, "
       << (rank > 1 ? "strides" : "nullptr") << ", box, steps,\n"
       << "                                   CU_TENSOR_MAP_INTERLEAVE_NONE, " << swizzle
       << ", CU_TENSOR_MAP_L2_PROMOTION_L2_256B,\n"
          "                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)\n"
          "          return cudaErrorInvalidValue;\n      }\n";
  }
  // The kernel's arguments, in its parameters' order.
  os << "      void *args[] = {";
  bool first = true;
  auto arg = [&](const std::string &a) {
    os << (first ? "" : ", ") << "(void *)&" << a;
    first = false;
  };
  for (const std::string &d : k.signature.runtimeDims)
    arg(dimVar(d));
  for (size_t i = 0; i < k.signature.params.size(); ++i)
    arg(kernelArgument(launch, i));
  for (size_t i = 0; i < k.divisors.size(); ++i)
    arg("divisor" + std::to_string(i));
  for (size_t t = 0; t < k.tensorMaps.size(); ++t)
    arg("tmap" + std::to_string(t));
  os << "};\n";
  std::string shared = std::to_string(k.dynamicSharedBytes);
  std::string besideShared =
      std::to_string(std::max(k.dynamicSharedBytes, launch.besideSharedBytes));
  os << "      const void *kernel = (const void *)::" << k.entry << ";\n";
  if (launch.overlap) {
    // Beside the launch before it, where the runtime would (runsBeside).
    os << "      const bool beside = side && ctas < sms"
       << (launch.besideSharedBytes ? " && 2 * ctas <= sms" : "") << ";\n";
    os << "      const size_t shared = beside ? " << besideShared << " : " << shared << ";\n";
  } else {
    os << "      const size_t shared = " << shared << ";\n";
  }
  os << "      if (shared > 48 * 1024 && (status = cudaFuncSetAttribute(kernel, "
        "cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared)) != cudaSuccess)\n"
        "        return status;\n";
  os << "      const dim3 blocks((unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2]), "
        "threads("
     << k.threads << ");\n";
  if (launch.overlap) {
    os << "      if (beside) {\n"
          "        cudaEvent_t done;\n"
          "        if ((status = cudaStreamWaitEvent(side, before, 0)) != cudaSuccess ||\n"
          "            (status = cudaLaunchKernel(kernel, blocks, threads, args, shared, side)) "
          "!= cudaSuccess ||\n"
          "            (status = cudaEventCreateWithFlags(&done, cudaEventDisableTiming)) != "
          "cudaSuccess)\n"
          "          return status;\n"
          "        status = cudaEventRecord(done, side);\n"
          "        if (status == cudaSuccess)\n"
          "          status = cudaStreamWaitEvent(stream, done, 0);\n"
          "        cudaEventDestroy(done);\n"
          "        if (status != cudaSuccess)\n"
          "          return status;\n"
          "      } else {\n";
  }
  std::string in = launch.overlap ? "  " : "";
  os << in << "      if (before && (status = cudaEventRecord(before, stream)) != cudaSuccess)\n"
     << in << "        return status;\n";
  if (launch.early) {
    // Started early (CUDA's programmatic dependent launch): the kernel
    // awaits the launch before it where it reads that one's results.
    os << "      if (after) {\n"
          "        cudaLaunchAttribute early[1];\n"
          "        early[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;\n"
          "        early[0].val.programmaticStreamSerializationAllowed = 1;\n"
          "        const cudaLaunchConfig_t config = {blocks, threads, shared, stream, early, 1};\n"
          "        status = cudaLaunchKernelExC(&config, kernel, args);\n"
          "      } else {\n"
          "        status = cudaLaunchKernel(kernel, blocks, threads, args, shared, stream);\n"
          "      }\n"
          "      if (status != cudaSuccess)\n"
          "        return status;\n";
  } else {
    os << in << "      if ((status = cudaLaunchKernel(kernel, blocks, threads, args, shared, "
       << "stream)) != cudaSuccess)\n"
       << in << "        return status;\n";
  }
  if (tracked)
    os << in << "      ran = true;\n";
  if (launch.overlap)
    os << "      }\n";
  os << "    }\n  }\n";
}

void HeaderPrinter::print(const std::string &cudaFile, const std::vector<std::string> &banner) {
  classifyDims();
  std::string ns = cIdentifier(m.entry);
  std::vector<OpPlan::Launch> steps = launches();
  bool overlaps = llvm::any_of(steps, [](const OpPlan::Launch &l) { return l.overlap; });
  bool persistent = false, divisors = false;
  bool fp8 = false; // an f8e4m3 tensor: its type comes from cuda_fp8.h
  for (size_t i = 0; i < steps.size(); ++i) {
    persistent |= kernelOf(i).persistent != 0;
    divisors |= !kernelOf(i).divisors.empty();
    for (const ParamInfo &p : kernelOf(i).signature.params)
      fp8 |= p.dtype == DType::F8E4M3;
  }
  for (const std::string &line : banner)
    os << "// " << line << "\n";
  os << "//\n// The host launcher of " << m.entry << ", whose kernels " << cudaFile
     << " defines:\n// compile both with nvcc -arch=" << m.target
     << " and link with -lcuda. It allocates nothing.\n"
        "#pragma once\n#include <cuda.h>\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n"
     << (fp8 ? "#include <cuda_fp8.h>\n" : "")
     << "#include <cuda_runtime.h>\n#include <stddef.h>\n#include <stdint.h>\n\n";
  // The kernels, as the .cu defines them.
  std::set<std::string> declared;
  for (size_t i = 0; i < steps.size(); ++i) {
    const KernelManifest &k = kernelOf(i);
    if (!declared.insert(k.entry).second)
      continue;
    CudaKernelParams p = cudaKernelParams(k);
    os << "extern \"C\" __global__ void " << k.entry << "(";
    for (size_t j = 0; j < p.names.size(); ++j)
      os << (j ? ", " : "") << p.types[j] << (p.types[j].back() == '*' ? "" : " ") << p.names[j];
    os << ");\n";
  }
  os << "\nnamespace kiln {\nnamespace " << ns << " {\n\n";
  os << "/// The runtime dims: each in [0, 2^31).\nstruct Dims {\n";
  for (const std::string &g : given)
    os << "  int64_t " << cIdentifier(g) << " = 0;\n";
  os << "};\n\n";
  if (divisors)
    os << "namespace detail {\n/// The multiplier and shift a kernel divides by `d` with "
          "(tile-invariant-divisors).\n"
          "inline uint64_t divisor_arg(int64_t d) {\n  uint64_t l = 0;\n"
          "  while ((int64_t(1) << l) < d)\n    ++l;\n  uint64_t s = 31 + l;\n"
          "  uint64_t m = ((uint64_t(1) << s) + uint64_t(d) - 1) / uint64_t(d);\n"
          "  return m | (s << 32);\n}\n} // namespace detail\n\n";
  bool hasScratch = !m.plan.scratch.empty();
  if (hasScratch) {
    printScratchOffsets();
    os << "\n/// Bytes of the scratch buffer launch() needs for these dims.\n"
          "inline size_t scratch_bytes(const Dims &d) {\n  size_t offsets["
       << m.plan.scratch.size() << "];\n  return scratch_offsets(d, offsets);\n}\n\n";
  }
  // launch().
  os << "/// Launches " << m.entry << " on `stream`";
  if (hasScratch)
    os << ", with `scratch` of scratch_bytes(dims)\n/// bytes (its contents need not be kept)";
  if (overlaps)
    os << "; a launch marked `overlap` runs beside the\n/// launch before it on `side` where "
          "given (a high-priority stream), else after it";
  os << ".\n/// Device pointers of these shapes:\n";
  for (const ParamInfo &p : opSignature().params)
    os << "///   " << p.name << ": "
       << (p.isView ? shapeText(p) + " (" + p.access + ")" : std::string(dtypeName(p.dtype)))
       << "\n";
  os << "/// Returns cudaErrorInvalidValue for dims out of range; else the first CUDA error.\n";
  os << "inline cudaError_t launch(";
  for (const ParamInfo &p : opSignature().params)
    os << paramType(p) << (paramType(p).back() == '*' ? "" : " ") << cIdentifier(p.name) << ", ";
  os << "const Dims &d, cudaStream_t stream";
  if (hasScratch)
    os << ", void *scratch";
  if (overlaps)
    os << ", cudaStream_t side = nullptr";
  os << ") {\n";
  for (const std::string &g : given)
    os << "  if (d." << cIdentifier(g) << " < 0 || d." << cIdentifier(g)
       << " >= (int64_t(1) << 31))\n    return cudaErrorInvalidValue;\n";
  // Kernel arguments are addresses of these: not const.
  printDimLocals("int64_t");
  os << "  cudaError_t status = cudaSuccess;\n";
  if (persistent || overlaps)
    os << "  int device = 0, sms = 0;\n"
          "  if ((status = cudaGetDevice(&device)) != cudaSuccess ||\n"
          "      (status = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, "
          "device)) != cudaSuccess)\n    return status;\n";
  if (hasScratch) {
    // Scratch starts as the runtime leaves it (all ones: a read of what no
    // kernel wrote shows as NaN).
    os << "  size_t offsets[" << m.plan.scratch.size() << "];\n"
       << "  const size_t scratch_size = scratch_offsets(d, offsets);\n"
          "  if ((status = cudaMemsetAsync(scratch, 0xff, scratch_size, stream)) != "
          "cudaSuccess)\n    return status;\n";
    for (size_t i = 0; i < m.plan.scratch.size(); ++i) {
      const ParamInfo &s = m.plan.scratch[i];
      os << "  " << cudaTypeName(s.dtype) << " *scratch_" << cIdentifier(s.name) << " = ("
         << cudaTypeName(s.dtype) << " *)((char *)scratch + offsets[" << i << "]);\n";
    }
  }
  // An event before each launch on `stream`, for an overlap launch after it.
  if (overlaps)
    os << "  cudaEvent_t before = nullptr;\n"
          "  if (side && (status = cudaEventCreateWithFlags(&before, "
          "cudaEventDisableTiming)) != cudaSuccess)\n    return status;\n"
          "  struct Release {\n    cudaEvent_t e;\n"
          "    ~Release() {\n      if (e)\n        cudaEventDestroy(e);\n    }\n"
          "  } release{before};\n";
  else
    os << "  const cudaEvent_t before = nullptr;\n";
  bool tracked = llvm::any_of(steps, [](const OpPlan::Launch &l) { return l.early; });
  if (tracked)
    os << "  bool ran = false; // whether the last launch on `stream` is this call's\n";
  for (size_t i = 0; i < steps.size(); ++i)
    printStep(i, steps[i], tracked);
  os << "  return cudaSuccess;\n}\n\n} // namespace " << ns << "\n} // namespace kiln\n";
}

} // namespace

void kiln::printLauncherHeader(const KernelManifest &m, const std::string &cudaFile,
                               const std::vector<std::string> &banner, llvm::raw_ostream &os) {
  HeaderPrinter(m, os).print(cudaFile, banner);
}
