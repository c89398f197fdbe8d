//===- reference_unit.cpp - the float64 reference and its data files ------===//
//
// .npy files in and out, the arguments `kiln run` makes from a signature,
// and every schedule of every bundled op without a golden harness against
// its float64 promotion (the softmax tutorial op), at its `check` shapes.
//
//===----------------------------------------------------------------------===//
#include "backends/runtime/Npy.h"
#include "tools/kiln/Driver.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

using namespace kiln;

static std::string tempPath(const std::string &name) {
  llvm::SmallString<128> dir;
  llvm::sys::path::system_temp_directory(true, dir);
  llvm::sys::path::append(dir, "kiln-reference-unit-" + name);
  return dir.str().str();
}

TEST_CASE("npy files round-trip every dtype and rank", "[reference]") {
  std::string path = tempPath("x.npy"), error;
  for (DType t :
       {DType::F32, DType::F64, DType::BF16, DType::F16, DType::I8, DType::I32, DType::I64})
    for (std::vector<int64_t> shape : {std::vector<int64_t>{}, {7}, {3, 5}, {2, 3, 4}, {0, 4}}) {
      int64_t n = 1;
      for (int64_t s : shape)
        n *= s;
      std::vector<uint8_t> data(n * dtypeBytes(t));
      for (size_t i = 0; i < data.size(); ++i)
        data[i] = uint8_t(i * 37 + 11);
      INFO(dtypeName(t) << " rank " << shape.size());
      REQUIRE(writeNpy(path, t, shape, data.data(), error));
      NpyArray back;
      REQUIRE(readNpy(path, back, error));
      CHECK(back.shape == shape);
      CHECK(npyHolds(back.descr, t));
      CHECK(back.bytes == data);
    }
}

TEST_CASE("npy readers name what is wrong with a file", "[reference]") {
  std::string path = tempPath("bad.npy"), error;
  NpyArray a;
  auto write = [&](const std::string &bytes) {
    std::FILE *f = std::fopen(path.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  };
  write("not numpy at all");
  CHECK_FALSE(readNpy(path, a, error));
  CHECK(error.find("not a .npy file") != std::string::npos);
  std::string header = "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }";
  write(std::string("\x93NUMPY\x01\x00", 8) + char(header.size()) + '\0' + header + "12345678");
  CHECK_FALSE(readNpy(path, a, error));
  CHECK(error.find("Fortran-order") != std::string::npos);
  header = "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }";
  write(std::string("\x93NUMPY\x01\x00", 8) + char(header.size()) + '\0' + header + "12345678");
  CHECK_FALSE(readNpy(path, a, error));
  CHECK(error.find("big-endian") != std::string::npos);
  header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  write(std::string("\x93NUMPY\x01\x00", 8) + char(header.size()) + '\0' + header + "1234");
  CHECK_FALSE(readNpy(path, a, error));
  CHECK(error.find("truncated data: 4 bytes for 24") != std::string::npos);
  // ml_dtypes.bfloat16 arrays are saved as two-byte voids.
  CHECK(npyHolds("<V2", DType::BF16));
  CHECK(npyHolds("<u2", DType::BF16));
  CHECK_FALSE(npyHolds("<V2", DType::F16));
  CHECK(npyHolds("<i1", DType::I8));
}

static KernelSignature gatherSignature() {
  KernelSignature sig;
  sig.name = "gather";
  sig.runtimeDims = {"N", "B"};
  ParamInfo pool{"pool", true, "in", DType::F32, {-1, 8}, {"N", ""}};
  ParamInfo slots{"slots", true, "in", DType::I32, {-1}, {"B"}};
  slots.hasRange = true;
  slots.rangeLo.value = -1;
  slots.rangeHi.dim = "N";
  ParamInfo out{"out", true, "out", DType::BF16, {-1, 8}, {"B", ""}};
  ParamInfo scale{"scale", false, "", DType::F32, {}, {}};
  sig.params = {pool, slots, out, scale};
  return sig;
}

TEST_CASE("arguments come from the signature: shapes, ranges, poison", "[reference]") {
  KernelSignature sig = gatherSignature();
  std::vector<HostArg> args;
  std::string error;
  REQUIRE(makeArguments(sig, {{"N", 5}, {"B", 300}}, {}, {}, 1, args, error));
  CHECK(args[0].shape == std::vector<int64_t>{5, 8});
  std::vector<double> slots = args[1].values();
  CHECK(*std::min_element(slots.begin(), slots.end()) == -1);
  CHECK(*std::max_element(slots.begin(), slots.end()) == 4);
  for (double v : args[2].values())
    CHECK(std::isnan(v));
  // The same seed draws the same inputs; another seed others.
  std::vector<HostArg> again, other;
  REQUIRE(makeArguments(sig, {{"N", 5}, {"B", 300}}, {}, {}, 1, again, error));
  REQUIRE(makeArguments(sig, {{"N", 5}, {"B", 300}}, {}, {}, 2, other, error));
  CHECK(again[0].bytes == args[0].bytes);
  CHECK(other[0].bytes != args[0].bytes);
  // Fallback dims fill in only what nothing else gives.
  REQUIRE(makeArguments(sig, {{"B", 3}}, {{"N", 9}, {"B", 4}, {"T", 2}}, {}, 1, args, error));
  CHECK(args[0].shape == std::vector<int64_t>{9, 8});
  CHECK(args[1].shape == std::vector<int64_t>{3});
  CHECK_FALSE(makeArguments(sig, {{"B", 3}}, {}, {}, 1, args, error));
  CHECK(error == "gather needs runtime dim N: give --dims N=... (or files in --inputs that fix "
                 "them)");
  DataOptions floatRange;
  floatRange.ranges["pool"] = {0, 3};
  CHECK_FALSE(makeArguments(sig, {{"N", 5}, {"B", 3}}, {}, floatRange, 1, args, error));
  CHECK(error.find("a range is for integer inputs") != std::string::npos);
}

TEST_CASE("default tolerances follow the output type", "[reference]") {
  CHECK(defaultTolerance(DType::F32, false) == 1e-5);
  CHECK(defaultTolerance(DType::F32, true) == 1e-2);
  CHECK(defaultTolerance(DType::BF16, true) == 3e-2);
  CHECK(defaultTolerance(DType::I32, true) == 0);
  CheckResult exact{"n", 0, 0, false};
  CHECK(exact.ok());
  CheckResult off{"n", 1e-9, 0, false};
  CHECK_FALSE(off.ok());
}

/// Bundled ops with no golden harness: their source and schedules.
static std::vector<std::pair<std::string, std::string>> referenceOps() {
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code ec;
  std::string root = std::string(KILN_SOURCE_DIR) + "/ops";
  for (llvm::sys::fs::directory_iterator op(root, ec), end; op != end && !ec; op.increment(ec)) {
    std::string name = llvm::sys::path::filename(op->path()).str();
    std::string tile = op->path() + "/" + name + ".tile";
    if (!llvm::sys::fs::exists(tile))
      continue;
    for (llvm::sys::fs::directory_iterator s(op->path() + "/schedules", ec), e; s != e && !ec;
         s.increment(ec))
      out.push_back({tile, s->path()});
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("ops without a harness match their float64 reference on every schedule", "[reference]") {
  auto jobs = referenceOps();
  REQUIRE(!jobs.empty());
  for (auto &[tile, schedule] : jobs) {
    auto shapes = checkShapesOf(tile);
    REQUIRE(!shapes.empty());
    for (auto &dims : shapes)
      for (uint64_t seed : {1, 2}) {
        RunConfig cfg;
        cfg.dims = dims;
        cfg.seed = seed;
        std::vector<CheckResult> checks;
        std::string errors;
        llvm::raw_string_ostream os(errors);
        bool ran = runOnCpu(tile, schedule, {}, cfg, checks, os);
        INFO(schedule << " seed " << seed << "\n" << errors);
        REQUIRE(ran);
        REQUIRE(!checks.empty());
        for (const CheckResult &c : checks) {
          INFO(c.what << " rel_err " << c.relError << " tol " << c.tolerance);
          CHECK(c.ok());
        }
      }
  }
}
