//===- schedule_unit.cpp - schedule loading and kernel-argument binding ---===//
#include "backends/cpu/KernelSignature.h"
#include "tools/kiln/Driver.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <catch2/catch.hpp>
#include <fstream>

using namespace kiln;

/// A view parameter of a kernel signature (size -1: a runtime dim).
static ParamInfo viewParam(std::string name, std::string access, DType dtype,
                           std::vector<int64_t> sizes, std::vector<std::string> dimNames) {
  ParamInfo p;
  p.name = std::move(name);
  p.isView = true;
  p.access = std::move(access);
  p.dtype = dtype;
  p.sizes = std::move(sizes);
  p.dimNames = std::move(dimNames);
  return p;
}

TEST_CASE("bundled schedules load and carry their target's budgets", "[schedule]") {
  Schedule s;
  std::string errors;
  llvm::raw_string_ostream os(errors);
  REQUIRE(loadSchedule(std::string(KILN_SOURCE_DIR) + "/ops/gdn/schedules/decode_sm_90a_tma.yaml",
                       s, os));
  CHECK(s.target->name == "sm_90a");
  CHECK(s.smemBudget == 232448);
  REQUIRE(s.roles.size() == 2);
  CHECK(s.roles[0].name.name == "producer");
  CHECK(s.roles[1].firstWarp == 4);
  CHECK(s.persistent == 0);
  // Producer 4 warps x 24 + compute 4 x 104, averaged over 8 warps: 64.
  CHECK(s.launchRegs() == 64);
  Schedule ring;
  REQUIRE(loadSchedule(
      std::string(KILN_SOURCE_DIR) + "/ops/gdn/schedules/decode_sm_90a_tma_ring.yaml", ring, os));
  CHECK(ring.persistent == 3);
  CHECK(ring.pipelines[0].depth == 2);
  REQUIRE(s.pipelines.size() == 1);
  CHECK(s.pipelines[0].copy.name == "tma");
}

TEST_CASE("a var in tensor memory is read per kernel and dropped by a twin without it",
          "[schedule]") {
  std::string path =
      std::string(KILN_SOURCE_DIR) + "/ops/gdn/schedules/prefill_split_sm_100a_tmem.yaml";
  std::string errors;
  llvm::raw_string_ostream os(errors);
  Schedule s;
  REQUIRE(loadSchedule(path, s, os));
  CHECK(s.resident.empty());
  const Schedule &scan = s.forKernel("gdn_prefill_scan");
  REQUIRE(scan.resident.size() == 1);
  CHECK(scan.resident[0].name == "S");
  CHECK(s.forKernel("gdn_prefill_chunks").resident.empty());
  // A twin for sm_90a keeps the var in registers, as it drops the
  // tensor-memory budget.
  llvm::SmallString<128> tmp;
  REQUIRE(!llvm::sys::fs::createTemporaryFile("kiln-tmem", "yaml", tmp));
  {
    std::ofstream out(tmp.c_str());
    out << "target: sm_100a\nwarps: 4\nmma: tcgen05\nkernels:\n  scan:\n"
           "    tensor_memory: [S]\n";
  }
  Schedule own, twin;
  REQUIRE(loadSchedule(tmp.c_str(), own, os));
  CHECK(own.forKernel("scan").resident.size() == 1);
  twin.retarget = lookupTarget("sm_90a");
  REQUIRE(loadSchedule(tmp.c_str(), twin, os));
  CHECK(twin.forKernel("scan").mma.name == "wgmma");
  CHECK(twin.forKernel("scan").resident.empty());
  llvm::sys::fs::remove(tmp);
}

TEST_CASE("kernel arguments are checked against the signature", "[runtime]") {
  KernelSignature sig;
  sig.name = "k";
  sig.runtimeDims = {"B"};
  sig.params = {viewParam("x", "in", DType::F32, {-1, 4}, {"B", ""}),
                viewParam("y", "in", DType::F32, {-1, 4}, {"B", ""})};
  float buf[64];
  std::map<std::string, int64_t> dims;
  std::string error;
  CHECK(bindArguments(
      sig, {ArgValue::tensor(buf, {3, 4}, DType::F32), ArgValue::tensor(buf, {3, 4}, DType::F32)},
      dims, error));
  CHECK(dims["B"] == 3);
  dims.clear();
  CHECK_FALSE(bindArguments(
      sig, {ArgValue::tensor(buf, {3, 4}, DType::F32), ArgValue::tensor(buf, {5, 4}, DType::F32)},
      dims, error));
  CHECK(error == "argument 'y' dim 0 (B) is 5 but 'x' gave B = 3");
  dims.clear();
  CHECK_FALSE(bindArguments(
      sig, {ArgValue::tensor(buf, {3, 5}, DType::F32), ArgValue::tensor(buf, {3, 4}, DType::F32)},
      dims, error));
  CHECK(error == "argument 'x' dim 1 must be 4, got 5");
  dims.clear();
  CHECK_FALSE(bindArguments(
      sig, {ArgValue::tensor(buf, {3, 4}, DType::BF16), ArgValue::tensor(buf, {3, 4}, DType::F32)},
      dims, error));
  CHECK(error == "argument 'x' must be f32, got bf16");
}

TEST_CASE("a dim N + 1 is tied to N at launch", "[runtime]") {
  // cu_seqlens: i64[N + 1] beside state: f32[N, 2].
  KernelSignature sig;
  sig.name = "k";
  sig.runtimeDims = {"N+1", "N"};
  int64_t offsets[8];
  float buf[16];
  std::map<std::string, int64_t> dims;
  std::string error;
  ParamInfo cu = viewParam("cu_seqlens", "in", DType::I64, {-1}, {"N+1"});
  sig.params = {cu, viewParam("state", "out", DType::F32, {-1, 2}, {"N", ""})};
  CHECK(bindArguments(
      sig, {ArgValue::tensor(offsets, {5}, DType::I64), ArgValue::tensor(buf, {4, 2}, DType::F32)},
      dims, error));
  CHECK(dims["N"] == 4);
  dims.clear();
  CHECK_FALSE(bindArguments(
      sig, {ArgValue::tensor(offsets, {4}, DType::I64), ArgValue::tensor(buf, {4, 2}, DType::F32)},
      dims, error));
  CHECK(error == "argument 'cu_seqlens' gives N+1 = 4 but 'state' gave N = 4");
  // Alone, N + 1 fixes N; it must leave N positive.
  sig.params = {cu};
  sig.runtimeDims = {"N+1", "N"};
  dims.clear();
  CHECK(bindArguments(sig, {ArgValue::tensor(offsets, {3}, DType::I64)}, dims, error));
  CHECK(dims["N"] == 2);
  dims.clear();
  CHECK_FALSE(bindArguments(sig, {ArgValue::tensor(offsets, {1}, DType::I64)}, dims, error));
  CHECK(error == "argument 'cu_seqlens' gives N+1 = 1, so N = 0 (must be positive)");
}
