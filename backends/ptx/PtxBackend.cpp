//===- PtxBackend.cpp - NVVM kernels to PTX and cubins --------------------===//
#include "backends/ptx/PtxBackend.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <map>
#include <regex>

using namespace mlir;
using namespace kiln;

static void initNvptx() {
  static bool done = [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    return true;
  }();
  (void)done;
}

std::optional<std::string> kiln::emitPtx(ModuleOp module, const TargetDesc &target,
                                         std::string &error) {
  initNvptx();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule) {
    error = "translation of the NVVM module to LLVM IR failed";
    return std::nullopt;
  }
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string lookupError;
  const llvm::Target *llvmTarget = llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!llvmTarget) {
    error = "the NVPTX backend is not available in this LLVM: " + lookupError;
    return std::nullopt;
  }
  llvm::TargetOptions options;
  // Fuse multiply-adds as nvcc does by default (--fmad=true): one rounding
  // instead of two, and half the instructions.
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, target.ptxChip, target.ptxFeatures, options, std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  // LLVM's O3 pipeline, as clang -O3 would run it for this target.
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(machine.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(*llvmModule, mam);

  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    error = "the NVPTX backend cannot emit assembly";
    return std::nullopt;
  }
  codegen.run(*llvmModule);
  return std::string(ptx.str());
}

std::string kiln::findCudaTool(const std::string &name, const char *envVar) {
  if (const char *p = std::getenv(envVar))
    return p;
  std::vector<std::string> candidates;
  if (const char *home = std::getenv("CUDA_HOME"))
    candidates.push_back(std::string(home) + "/bin/" + name);
  candidates.push_back("/usr/local/cuda/bin/" + name);
  for (const std::string &c : candidates)
    if (llvm::sys::fs::can_execute(c))
      return c;
  if (auto found = llvm::sys::findProgramByName(name))
    return *found;
  return "";
}

std::string kiln::findPtxas() { return findCudaTool("ptxas", "KILN_PTXAS"); }

static bool readWhole(const std::string &path, std::string &out) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buf)
    return false;
  out = (*buf)->getBuffer().str();
  return true;
}

bool kiln::runCudaTool(const std::string &tool, const std::string &inputExt,
                       const std::string &input, const std::vector<std::string> &options,
                       std::string &output, std::string &log, std::string &error) {
  llvm::SmallString<128> in, out, logPath;
  int fd;
  std::string name = llvm::sys::path::filename(tool).str();
  if (llvm::sys::fs::createTemporaryFile("kiln", inputExt, fd, in) ||
      llvm::sys::fs::createTemporaryFile("kiln", "out", out) ||
      llvm::sys::fs::createTemporaryFile("kiln", "log", logPath)) {
    error = "cannot create temporary files for " + name;
    return false;
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << input;
  }
  llvm::SmallVector<llvm::StringRef> args = {tool};
  for (const std::string &o : options)
    args.push_back(o);
  args.append({in.str(), "-o", out.str()});
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath.str(), logPath.str()};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(tool, args, std::nullopt, redirects, 0, 0, &execError);
  readWhole(logPath.str().str(), log);
  bool ok = rc == 0 && readWhole(out.str().str(), output);
  llvm::sys::fs::remove(in);
  llvm::sys::fs::remove(out);
  llvm::sys::fs::remove(logPath);
  if (!ok)
    error = name + " " + (options.empty() ? "" : options.front()) + " failed" +
            (execError.empty() ? "" : ": " + execError) + "\n" + log;
  return ok;
}

bool kiln::assemblePtx(const std::string &ptx, const TargetDesc &target, std::string &cubin,
                       PtxasReport &report, std::string &error, bool lineInfo) {
  std::string ptxas = findPtxas();
  if (ptxas.empty()) {
    error = "ptxas not found (set KILN_PTXAS or install the CUDA toolkit)";
    return false;
  }
  std::vector<std::string> options = {"-arch=" + target.ptxChip, "-O3", "-v"};
  if (lineInfo)
    options.push_back("-lineinfo");
  if (!runCudaTool(ptxas, "ptx", ptx, options, cubin, report.log, error))
    return false;
  parsePtxasLog(report);
  return true;
}

void kiln::parsePtxasLog(PtxasReport &report) {
  // One section per entry function; the whole report is the worst of them.
  static const std::regex fn("Compiling entry function '([^']+)'");
  static const std::regex regsRe("Used (\\d+) registers");
  static const std::regex smemRe("(\\d+) bytes smem");
  static const std::regex spill(
      "(\\d+) bytes stack frame, (\\d+) bytes spill stores, (\\d+) bytes spill loads");
  // The advisories come before the sections, each naming its function.
  static const std::regex injected("\\(C7517\\)[^\n]*in function '([^']+)'");
  std::map<std::string, int> waits;
  for (auto it = std::sregex_iterator(report.log.begin(), report.log.end(), injected);
       it != std::sregex_iterator(); ++it)
    ++waits[(*it)[1]];
  static const std::regex serialized(
      "\\(C7512\\)[^\n]*serialized due to ([^\n]*?) (?:in|for) the function '([^']+)'");
  std::map<std::string, std::string> serializedWhy;
  for (auto it = std::sregex_iterator(report.log.begin(), report.log.end(), serialized);
       it != std::sregex_iterator(); ++it)
    serializedWhy[(*it)[2]] = (*it)[1];
  std::vector<std::pair<size_t, std::string>> starts;
  for (auto it = std::sregex_iterator(report.log.begin(), report.log.end(), fn);
       it != std::sregex_iterator(); ++it)
    starts.push_back({(size_t)it->position(0), (*it)[1]});
  for (size_t i = 0; i < starts.size(); ++i) {
    size_t end = i + 1 < starts.size() ? starts[i + 1].first : report.log.size();
    std::string section = report.log.substr(starts[i].first, end - starts[i].first);
    PtxasReport e;
    e.kernel = starts[i].second;
    std::smatch m;
    if (std::regex_search(section, m, regsRe))
      e.registers = std::stoi(m[1]);
    if (std::regex_search(section, m, smemRe))
      e.sharedBytes = std::stoll(m[1]);
    if (std::regex_search(section, m, spill)) {
      e.stackBytes = std::stoll(m[1]);
      e.spillStores = std::stoll(m[2]);
      e.spillLoads = std::stoll(m[3]);
    }
    e.injectedWaits = waits[e.kernel];
    e.wgmmaSerialized = serializedWhy[e.kernel];
    if (i == 0)
      report.kernel = e.kernel;
    report.injectedWaits += e.injectedWaits;
    if (report.wgmmaSerialized.empty())
      report.wgmmaSerialized = e.wgmmaSerialized;
    report.registers = std::max(report.registers, e.registers);
    report.sharedBytes = std::max(report.sharedBytes, e.sharedBytes);
    report.stackBytes = std::max(report.stackBytes, e.stackBytes);
    report.spillStores += e.spillStores;
    report.spillLoads += e.spillLoads;
    report.entries.push_back(e);
  }
}
