//===- Nvcc.cpp - CUDA source to cubin with nvcc --------------------------===//
#include "backends/cuda/Nvcc.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <vector>

std::string kiln::findNvcc() {
  if (const char *p = std::getenv("KILN_NVCC"))
    return p;
  std::vector<std::string> candidates;
  if (const char *home = std::getenv("CUDA_HOME"))
    candidates.push_back(std::string(home) + "/bin/nvcc");
  candidates.push_back("/usr/local/cuda/bin/nvcc");
  for (const std::string &c : candidates)
    if (llvm::sys::fs::can_execute(c))
      return c;
  if (auto found = llvm::sys::findProgramByName("nvcc"))
    return *found;
  return "";
}

static bool readWhole(llvm::StringRef path, std::string &out) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buf)
    return false;
  out = (*buf)->getBuffer().str();
  return true;
}

bool kiln::compileCudaSource(const std::string &source, const TargetDesc &target,
                             std::string &cubin, PtxasReport &report, std::string &error) {
  std::string nvcc = findNvcc();
  if (nvcc.empty()) {
    error = "nvcc not found (set KILN_NVCC or install the CUDA toolkit)";
    return false;
  }
  llvm::SmallString<128> in, out, log;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("kiln", "cu", fd, in) ||
      llvm::sys::fs::createTemporaryFile("kiln", "cubin", out) ||
      llvm::sys::fs::createTemporaryFile("kiln", "log", log)) {
    error = "cannot create temporary files for nvcc";
    return false;
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << source;
  }
  std::string arch = "-arch=" + target.ptxChip;
  llvm::SmallVector<llvm::StringRef> args = {nvcc,           "-cubin",  arch, "-O3",
                                             "-std=c++17",   "-Xptxas", "-v", "-Werror",
                                             "all-warnings", in.str(),  "-o", out.str()};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(), log.str()};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(nvcc, args, std::nullopt, redirects, 0, 0, &execError);
  readWhole(log.str(), report.log);
  bool ok = rc == 0 && readWhole(out.str(), cubin);
  llvm::sys::fs::remove(in);
  llvm::sys::fs::remove(out);
  llvm::sys::fs::remove(log);
  if (!ok) {
    error = "nvcc " + arch + " failed" + (execError.empty() ? "" : ": " + execError) + "\n" +
            report.log;
    return false;
  }
  parsePtxasLog(report);
  return true;
}
