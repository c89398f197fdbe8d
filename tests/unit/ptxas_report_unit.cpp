//===- ptxas_report_unit.cpp - what Kiln reads from ptxas -v ------------===//
// Per entry function its registers, stack and spills, and the tensor-core
// waits ptxas added on its own.

#include "backends/ptx/PtxBackend.h"

#include <catch2/catch.hpp>

using namespace kiln;

// The shape of ptxas 13.0's -v output for an image of two kernels, one of
// which it had to wait in and whose products it serialized (the advisories
// come before the sections).
static const char *kLog =
    "ptxas info    : (C7517) warpgroup.wait is injected in around line 5650 by compiler to "
    "allow use of registers defined by GMMA in function 'scan'\n"
    "ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are "
    "serialized due to insufficient register resources for the function 'scan'\n"
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'chunks' for 'sm_90a'\n"
    "ptxas info    : Function properties for chunks\n"
    "    24 bytes stack frame, 20 bytes spill stores, 20 bytes spill loads\n"
    "ptxas info    : Used 128 registers, used 1 barriers, 1024 bytes smem\n"
    "ptxas info    : Compiling entry function 'scan' for 'sm_90a'\n"
    "ptxas info    : Function properties for scan\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 136 registers, used 1 barriers\n";

TEST_CASE("ptxas report: per kernel, the worst of them, and the waits ptxas added", "[ptxas]") {
  PtxasReport r;
  r.log = kLog;
  parsePtxasLog(r);
  REQUIRE(r.entries.size() == 2);
  CHECK(r.entries[0].kernel == "chunks");
  CHECK(r.entries[0].registers == 128);
  CHECK(r.entries[0].spillStores == 20);
  CHECK(r.entries[0].sharedBytes == 1024);
  CHECK(r.entries[0].injectedWaits == 0);
  CHECK(r.entries[1].kernel == "scan");
  CHECK(r.entries[1].registers == 136);
  CHECK(r.entries[1].injectedWaits == 1);
  CHECK(r.entries[0].wgmmaSerialized.empty());
  CHECK(r.entries[1].wgmmaSerialized == "insufficient register resources");
  CHECK(r.wgmmaSerialized == "insufficient register resources");
  CHECK(r.registers == 136);
  CHECK(r.spillStores == 20);
  CHECK(r.injectedWaits == 1);
}

TEST_CASE("ptxas report: no advisory, no injected wait", "[ptxas]") {
  PtxasReport r;
  r.log = "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
          "ptxas info    : Used 40 registers\n";
  parsePtxasLog(r);
  REQUIRE(r.entries.size() == 1);
  CHECK(r.entries[0].injectedWaits == 0);
  CHECK(r.injectedWaits == 0);
  CHECK(r.wgmmaSerialized.empty());
}
