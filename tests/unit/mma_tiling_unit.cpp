//===- mma_tiling_unit.cpp - how dots split into tensor-core products ----===//
#include "lowering/analysis/KernelPlan.h"
#include "lowering/analysis/Layout.h"
#include "lowering/analysis/MmaTiling.h"
#include "lowering/analysis/WarpMma.h"

#include "mlir/IR/Builders.h"

#include <catch2/catch.hpp>

#include <set>

using namespace kiln;
using mlir::failed;
using mlir::succeeded;

namespace {
struct Types {
  mlir::MLIRContext ctx;
  mlir::Builder b{&ctx};
};
} // namespace

TEST_CASE("wgmma tiling: operand type, items and staging offsets", "[wgmma]") {
  Types t;
  std::string why;
  mlir::Type f32 = t.b.getF32Type(), bf16 = t.b.getBF16Type();

  // 64 x 64 over two warpgroups: each takes 32 columns; tf32 reads K in 8s.
  auto sq = MmaTiling::get(MmaTiling::Kind::Wgmma, 64, 64, 64, f32, f32, 8, why);
  REQUIRE(succeeded(sq));
  CHECK(sq->operands == MmaTiling::Operands::TF32);
  CHECK(sq->kStep == 8);
  CHECK((sq->mTiles == 1 && sq->nParts == 2 && sq->nChunk == 32 && sq->rounds() == 1));
  CHECK(sq->bOffset == 64 * 64 * 4);
  CHECK(sq->dOffset == 2 * 64 * 64 * 4);
  CHECK(sq->dStride == 72);
  CHECK(sq->bytes == sq->dOffset + 64 * 72 * 4);
  // K rows of 256 bytes swizzle in 128-byte blocks. Element (row 9, k 5):
  // byte 20 of row 9 of the first block, its 16-byte piece (1) permuted by
  // the row (9 % 8 = 1) to piece 0. k 37 is in the second block.
  CHECK(sq->swizzleBytes == 128);
  CHECK(sq->operandOffset(9, 5, 64, true) == 9 * 128 + (1 ^ 1) * 16 + 4);
  CHECK(sq->operandOffset(9, 37, 64, true) == 64 * 128 + 9 * 128 + (1 ^ 1) * 16 + 4);
  CHECK(sq->operandOffset(3, 0, 64, true) == 3 * 128 + (0 ^ 3) * 16);
  // 8 rows of one piece, and 8 pieces of one row, fall in 8 bank groups.
  std::set<int64_t> column, row;
  for (int64_t i = 0; i < 8; ++i) {
    column.insert(sq->operandOffset(i, 0, 64, true) % 128 / 16);
    row.insert(sq->operandOffset(5, 4 * i, 64, true) % 128 / 16);
  }
  CHECK((column.size() == 8 && row.size() == 8));
  CHECK(sq->descriptorBits(64, true) == (int64_t(1) << 62 | int64_t(1024 / 16) << 32 | 1 << 16));
  // Plain core matrices (operands written one element of K per thread):
  // 16 bytes of a row per K block, no permutation; K blocks 64 x 16 apart.
  CHECK(sq->operandOffset(9, 5, 64, false) == 1 * 64 * 16 + 9 * 16 + 1 * 4);
  CHECK(sq->descriptorBits(64, false) == (int64_t(128 / 16) << 32 | int64_t(64 * 16 / 16) << 16));

  // bf16 on both sides stays bf16 (K in 16s); M = 32 pads to one 64-row tile.
  auto half = MmaTiling::get(MmaTiling::Kind::Wgmma, 32, 128, 32, bf16, bf16, 4, why);
  REQUIRE(succeeded(half));
  CHECK(half->operands == MmaTiling::Operands::BF16);
  CHECK(half->kStep == 16);
  CHECK((half->rowsA == 64 && half->nParts == 1 && half->nChunk == 128));
  // 32 bf16 of K are 64 bytes a row: the 64-byte swizzle (mode 2), which
  // permutes pieces by row / 2.
  CHECK(half->swizzleBytes == 64);
  CHECK(half->bOffset % MmaTiling::kAtomAlignment == 0);
  CHECK(half->operandOffset(2, 8, 64, true) == 2 * 64 + (1 ^ 1) * 16);
  CHECK(uint64_t(half->descriptorBits(64, true)) >> 62 == 2);
  // Its B (32 x 128, N last) can be read N-major: rows of K (32 of them)
  // with N along them in 128-byte blocks (an instruction's N is 256 bytes),
  // N blocks K x 128 bytes apart, the swizzle permuting by the K row.
  CHECK(half->readsBNMajor());
  CHECK(half->nMajorSwizzleBytes == 128);
  CHECK(half->operandOffset(9, 70, 32, true, true) ==
        32 * 128 + 9 * 128 + ((6 * 2 / 16) ^ 1) * 16 + 6 * 2 % 16);
  // The descriptor: 128-byte swizzle, 8 K rows 1024 bytes apart (bits
  // 32-45), N blocks 4096 bytes apart (bits 16-29).
  CHECK(half->descriptorBits(32, true, true) ==
        (int64_t(1) << 62 | int64_t(1024 / 16) << 32 | int64_t(32 * 128 / 16) << 16));
  // Plain N-major core matrices: 8 K rows of 16 bytes (8 N) together; the
  // hardware then takes the 8-row stride from bits 16-29 and the N-block
  // stride (K x 16 bytes) from bits 32-45.
  CHECK(half->operandOffset(9, 70, 32, false, true) == 8 * 32 * 16 + 9 * 16 + 6 * 2);
  CHECK(half->descriptorBits(32, false, true) ==
        (int64_t(128 / 16) << 16 | int64_t(32 * 16 / 16) << 32));
  // N-major, a K step (16 of K) is 16 rows of 128 bytes down; K-major, 32
  // bytes along the rows. One column part spans all of N: its stride is
  // nChunk x K elements N-major, nChunk rows K-major.
  CHECK(half->stagedRows(/*isLhs=*/false, /*nMajor=*/true) == 32);
  CHECK(half->kStepOffset(1, /*isLhs=*/false, true, true) == 16 * 128);
  CHECK(half->kStepOffset(1, /*isLhs=*/false, true) == 32);
  CHECK(half->bPartStride(true, true) == 128 * 2 * 32);
  CHECK(half->bPartStride(true) == 128 * 64);
  // tf32 and tcgen05 products read B K-major only.
  CHECK_FALSE(sq->readsBNMajor());
  auto tc = MmaTiling::get(MmaTiling::Kind::Tcgen05, 64, 128, 32, bf16, bf16, 4, why);
  REQUIRE(succeeded(tc));
  CHECK_FALSE(tc->readsBNMajor());

  // Two 64-row tiles on one warpgroup: two rounds. N = 512 splits to 256s.
  auto tall = MmaTiling::get(MmaTiling::Kind::Wgmma, 128, 512, 16, f32, f32, 4, why);
  REQUIRE(succeeded(tall));
  CHECK(tall->operands == MmaTiling::Operands::TF32);
  CHECK((tall->mTiles == 2 && tall->nParts == 2 && tall->nChunk == 256));
  CHECK((tall->items() == 4 && tall->rounds() == 4));

  // N = 24 does not halve into whole instructions: one part of 24.
  auto odd = MmaTiling::get(MmaTiling::Kind::Wgmma, 64, 24, 8, f32, f32, 8, why);
  REQUIRE(succeeded(odd));
  CHECK((odd->nParts == 1 && odd->nChunk == 24 && odd->rounds() == 1));
  CHECK(odd->swizzleBytes == 32); // 8 tf32 of K
  CHECK(uint64_t(odd->descriptorBits(24, true)) >> 62 == 3);

  CHECK(failed(MmaTiling::get(MmaTiling::Kind::Wgmma, 64, 64, 12, f32, f32, 4, why)));
  CHECK(why == "has an inner dim of 12; wgmma on tf32 operands needs a multiple of 8");
  CHECK(failed(MmaTiling::get(MmaTiling::Kind::Wgmma, 64, 64, 16, f32, f32, 6, why)));
  CHECK(why == "runs on whole warpgroups, but the role has 6 warps");
}

TEST_CASE("an f32 A times a bf16 B splits A into two bf16 parts", "[wgmma][tcgen05]") {
  Types t;
  std::string why;
  mlir::Type f32 = t.b.getF32Type(), bf16 = t.b.getBF16Type(), f16 = t.b.getF16Type();
  for (MmaTiling::Kind kind : {MmaTiling::Kind::Wgmma, MmaTiling::Kind::Tcgen05}) {
    // The state update of GDN prefill's scan: 64 rows, N 128, K 32 tokens.
    auto split = MmaTiling::get(kind, 64, 128, 32, f32, bf16, 4, why);
    REQUIRE(succeeded(split));
    CHECK(split->splitA);
    CHECK(split->operands == MmaTiling::Operands::BF16);
    CHECK((split->elemBytes == 2 && split->kStep == 16 && split->kSteps() == 2));
    // Each part is 64 rows of 32 bf16; B starts after both, on an atom.
    CHECK((split->aParts() == 2 && split->aPartBytes() == 64 * 32 * 2));
    CHECK(split->bOffset == 2 * 64 * 32 * 2);
    CHECK(split->bOffset % MmaTiling::kAtomAlignment == 0);
    CHECK(split->dOffset >= split->bOffset + split->rowsB * 32 * 2);
  }
  // An odd number of 64-row tiles still starts B on an atom.
  auto small = MmaTiling::get(MmaTiling::Kind::Wgmma, 16, 16, 16, f32, bf16, 4, why);
  REQUIRE(succeeded(small));
  CHECK((small->aParts() == 2 && small->bOffset == 4096));
  // Only bf16 B: f16 parts would lose A's range, so f32 x f16 is tf32; and
  // so is a bf16 A times an f32 B, and f32 times f32.
  for (auto [a, b] : {std::pair{f32, f16}, std::pair{bf16, f32}, std::pair{f32, f32}}) {
    auto other = MmaTiling::get(MmaTiling::Kind::Wgmma, 64, 64, 32, a, b, 4, why);
    REQUIRE(succeeded(other));
    CHECK_FALSE(other->splitA);
    CHECK(other->aParts() == 1);
    CHECK(other->operands == MmaTiling::Operands::TF32);
  }
  auto whole = MmaTiling::get(MmaTiling::Kind::Wgmma, 64, 64, 32, bf16, bf16, 4, why);
  REQUIRE(succeeded(whole));
  CHECK((!whole->splitA && whole->bOffset == whole->aPartBytes()));
}

TEST_CASE("operands read where a TMA ring put them take no staging", "[wgmma][tcgen05]") {
  Types t;
  std::string why;
  mlir::Type bf16 = t.b.getBF16Type(), f32 = t.b.getF32Type();
  for (MmaTiling::Kind kind : {MmaTiling::Kind::Wgmma, MmaTiling::Kind::Tcgen05}) {
    // gdn_prefill_cp_correct: S_start [128, 128] times om^T, both from rings.
    auto full = MmaTiling::get(kind, 128, 32, 128, bf16, bf16, 4, why);
    REQUIRE(succeeded(full));
    int64_t resultBytes = full->bytes - full->dOffset;
    MmaTiling both = *full;
    both.placeStagingAreas(/*stageA=*/false, /*stageB=*/false);
    CHECK((both.aOffset == 0 && both.bOffset == 0 && both.dOffset == 0));
    CHECK(both.bytes == resultBytes);
    // Only B in place: A where it was, the result right after it.
    MmaTiling onlyA = *full;
    onlyA.placeStagingAreas(/*stageA=*/true, /*stageB=*/false);
    CHECK(onlyA.bOffset == full->bOffset);
    CHECK(onlyA.dOffset == full->bOffset);
    CHECK(onlyA.bytes == full->bOffset + resultBytes);
    // Only A in place: B first, on an atom.
    MmaTiling onlyB = *full;
    onlyB.placeStagingAreas(/*stageA=*/false, /*stageB=*/true);
    CHECK(onlyB.bOffset == 0);
    CHECK(onlyB.dOffset == full->rowsB * full->K * full->elemBytes);
    // Staging both is what get() lays out.
    MmaTiling again = *full;
    again.placeStagingAreas(true, true);
    CHECK((again.bOffset == full->bOffset && again.dOffset == full->dOffset &&
           again.bytes == full->bytes));
  }
  // A split A keeps both of its parts when staged.
  auto split = MmaTiling::get(MmaTiling::Kind::Wgmma, 64, 128, 128, f32, bf16, 4, why);
  REQUIRE(succeeded(split));
  split->placeStagingAreas(/*stageA=*/true, /*stageB=*/false);
  CHECK(split->dOffset == 2 * 64 * 128 * 2);
}

TEST_CASE("tcgen05 tiling: 128-row products, tensor-memory columns, descriptors", "[tcgen05]") {
  Types t;
  std::string why;
  mlir::Type f32 = t.b.getF32Type(), bf16 = t.b.getBF16Type();
  using Kind = MmaTiling::Kind;

  // 128 x 128 bf16: one 128-row instruction whose accumulator takes 128
  // columns; the instruction descriptor is the one CUTLASS builds for
  // bf16 x bf16 -> f32, both K-major.
  auto big = MmaTiling::get(Kind::Tcgen05, 128, 128, 64, bf16, bf16, 4, why);
  REQUIRE(succeeded(big));
  CHECK((big->instrM == 128 && big->mTiles == 1 && big->nParts == 1 && big->nChunk == 128));
  CHECK(big->tmemColumns == 128);
  CHECK(big->instructionDescriptor() == 0x08200490);
  // Read back 8 columns per tcgen05.ld (8 registers), blocks dealt to the
  // one warpgroup in turn.
  CHECK((big->loadColumns == 8 && big->loadBlocks() == 16 && big->loadRounds() == 16));
  // A 16-byte row pitch past a multiple of 128 bytes: 8 rows, 8 bank groups.
  CHECK(big->dStride == 132);
  // Descriptors: version 1 in bits 46-48, the 128-byte swizzle as 2 in bits
  // 61-63; the plain layout keeps the wgmma strides.
  CHECK(uint64_t(big->descriptorBits(128, true)) >> 61 == 2);
  CHECK((big->descriptorBits(128, true) >> 46 & 7) == 1);
  CHECK((big->descriptorBits(128, true) >> 32 & 0x3FFF) == 1024 / 16);
  CHECK(big->descriptorBits(128, false) ==
        (int64_t(1) << 46 | int64_t(128 / 16) << 32 | int64_t(128 * 16 / 16) << 16));

  // 64 rows or fewer: a 64-row instruction (N steps by 8); tf32 operands.
  auto small = MmaTiling::get(Kind::Tcgen05, 32, 24, 32, f32, f32, 8, why);
  REQUIRE(succeeded(small));
  CHECK((small->instrM == 64 && small->rowsA == 64 && small->nChunk == 24));
  CHECK(small->instructionDescriptor() == (1 << 4 | 2 << 7 | 2 << 10 | 3 << 17 | 4 << 24));
  CHECK((small->loadColumns == 8 && small->loadBlocks() == 3 && small->loadRounds() == 2));
  CHECK(small->swizzleBytes == 128);
  CHECK(uint64_t(small->descriptorBits(24, true)) >> 61 == 2);

  // 192 rows: two 128-row items, each with its own columns; N = 320 splits
  // into parts of 160 (a multiple of 16), never split for idle warpgroups.
  auto wide = MmaTiling::get(Kind::Tcgen05, 192, 320, 16, bf16, bf16, 8, why);
  REQUIRE(succeeded(wide));
  CHECK((wide->mTiles == 2 && wide->nParts == 2 && wide->nChunk == 160));
  CHECK(wide->tmemColumns == 4 * 160);
  CHECK((wide->loadColumns == 8 && wide->loadBlocks() == 80 && wide->loadRounds() == 40));
  CHECK(uint64_t(wide->descriptorBits(256, true)) >> 61 == 6); // 32-byte rows of K

  CHECK(failed(MmaTiling::get(Kind::Tcgen05, 64, 64, 16, f32, f32, 2, why)));
  CHECK(why == "reads its result from tensor memory on whole warpgroups (each warp of one "
               "reaches a quarter of the lanes), but the role has 2 warps");
  CHECK(failed(MmaTiling::get(Kind::Tcgen05, 64, 64, 12, f32, f32, 4, why)));
  CHECK(why == "has an inner dim of 12; tcgen05 on tf32 operands needs a multiple of 8");
}

TEST_CASE("wgmma fragments as tile layouts: every accumulator where the layout puts it",
          "[wgmma]") {
  Types t;
  t.ctx.getOrLoadDialect<tile::TileDialect>();
  std::string why;
  mlir::Type bf16 = t.b.getBF16Type(), f32 = t.b.getF32Type();
  struct Case {
    int64_t M, N, warps;
  };
  // One warpgroup, one or two rounds; two warpgroups a tile each or two.
  for (Case c : {Case{64, 64, 4}, Case{128, 32, 4}, Case{128, 256, 8}, Case{256, 16, 8}}) {
    INFO("M " << c.M << " N " << c.N << " warps " << c.warps);
    auto tiling = MmaTiling::get(MmaTiling::Kind::Wgmma, c.M, c.N, 64, bf16, bf16, c.warps, why);
    REQUIRE(succeeded(tiling));
    tile::LayoutAttr attr = tiling->fragmentLayout(&t.ctx);
    REQUIRE(attr);
    TileLayout l = TileLayout::get(attr, {c.M, c.N});
    REQUIRE(!l.mismatch());
    REQUIRE(l.numRegs() == tiling->rounds() * tiling->nChunk / 2);
    // Every element once, each where the PTX ISA's accumulator fragment
    // puts it: row 16 * warp + lane / 4 + 8 h, column 8 i + 2 (lane % 4) + c.
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t warp = 0; warp < c.warps; ++warp)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t round = 0; round < tiling->rounds(); ++round)
          for (int64_t reg = 0; reg < tiling->nChunk / 2; ++reg) {
            int64_t item = warp / 4 + round * tiling->warpgroups;
            int64_t row = 64 * item + 16 * (warp % 4) + lane / 4 + 8 * (reg / 2 % 2);
            int64_t col = 8 * (reg / 4) + 2 * (lane % 4) + reg % 2;
            llvm::SmallVector<int64_t, 2> ri = l.regIndex(tiling->fragmentRegister(round, reg));
            CHECK(l.coordinate(0, ri[0], lane, warp) == row);
            CHECK(l.coordinate(1, ri[1], lane, warp) == col);
            seen.insert({row, col});
          }
    CHECK((int64_t)seen.size() == c.M * c.N);
    // Contiguous runs are the pairs of columns; rows are lanes first.
    CHECK(l.contiguous(0) == 1);
    CHECK(l.contiguous(1) == 2);
  }
  // Column parts, padding rows or idle warpgroups have no such layout.
  for (Case c : {Case{64, 64, 8}, Case{32, 32, 4}, Case{64, 12, 4}, Case{64, 512, 4}}) {
    INFO("M " << c.M << " N " << c.N << " warps " << c.warps);
    auto tiling = MmaTiling::get(MmaTiling::Kind::Wgmma, c.M, c.N, 64, f32, f32, c.warps, why);
    REQUIRE(succeeded(tiling));
    CHECK(!tiling->fragmentLayout(&t.ctx));
  }
}

TEST_CASE("mma.sync fragments as tile layouts: every accumulator where the layout puts it",
          "[mma_sync]") {
  Types t;
  t.ctx.getOrLoadDialect<tile::TileDialect>();
  struct Case {
    int64_t M, N, wm, wn, warps;
  };
  // The default grids of a 32 x 32 and a 16 x 16 result on four warps (the
  // chunk kernel's and the MTP factors'), a grid of whole rows, and a
  // larger product with several blocks a warp.
  for (Case c : {Case{32, 32, 2, 2, 4}, Case{16, 16, 1, 2, 4}, Case{32, 32, 2, 1, 4},
                 Case{128, 128, 2, 2, 4}, Case{32, 48, 2, 2, 4}}) {
    INFO("M " << c.M << " N " << c.N << " grid " << c.wm << " x " << c.wn);
    WarpMmaTiling w;
    w.M = c.M;
    w.N = c.N;
    w.wm = c.wm;
    w.wn = c.wn;
    tile::LayoutAttr attr = w.fragmentLayout(&t.ctx);
    TileLayout l = TileLayout::get(attr, {c.M, c.N});
    REQUIRE(!l.mismatch());
    REQUIRE(l.numRegs() == 4 * w.mBlocks() * w.nBlocks());
    // The grid reads back from the layout (a schedule's `layouts:` picks it
    // this way).
    auto grid = WarpMmaTiling::fragmentGrid(attr);
    REQUIRE(grid);
    CHECK((grid->first == c.wm && grid->second == c.wn));
    // Every element once, each where the PTX ISA's m16n8 accumulator puts
    // it: row 16 (grid row + mb wm) + lane / 4 + 8 (reg / 2), column
    // 8 (grid column + nb wn) + 2 (lane % 4) + reg % 2. Warps past the
    // grid hold the first warps' elements.
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t warp = 0; warp < c.warps; ++warp)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t mb = 0; mb < w.mBlocks(); ++mb)
          for (int64_t nb = 0; nb < w.nBlocks(); ++nb)
            for (int64_t reg = 0; reg < 4; ++reg) {
              int64_t wr = warp / c.wn % c.wm, wc = warp % c.wn;
              int64_t row = 16 * (wr + mb * c.wm) + lane / 4 + 8 * (reg / 2);
              int64_t col = 8 * (wc + nb * c.wn) + 2 * (lane % 4) + reg % 2;
              llvm::SmallVector<int64_t, 2> ri = l.regIndex(w.fragmentRegister(mb, nb, reg));
              CHECK(l.coordinate(0, ri[0], lane, warp) == row);
              CHECK(l.coordinate(1, ri[1], lane, warp) == col);
              seen.insert({row, col});
            }
    CHECK((int64_t)seen.size() == c.M * c.N);
    CHECK(l.contiguous(1) == 2);
  }
  // A laid out as a result of whole rows (wm x 1) is an A operand in
  // registers: element e of the fragment of m16 block mb at k step ks is,
  // per the PTX ISA's m16n8k16 A, at row 16 (grid row + mb wm) + lane / 4
  // + 8 ((e / 2) % 2), column 16 ks + 2 (lane % 4) + e % 2 + 8 (e / 4).
  for (Case c : {Case{32, 32, 2, 1, 2}, Case{32, 64, 1, 1, 4}, Case{64, 32, 2, 1, 4}}) {
    INFO("A of " << c.M << " x " << c.N << " on " << c.wm << " x 1");
    WarpMmaTiling w;
    w.M = c.M;
    w.K = c.N;
    w.wm = c.wm;
    TileLayout l = TileLayout::get(WarpMmaTiling::fragmentLayout(&t.ctx, c.wm, 1), {c.M, c.N});
    for (int64_t warp = 0; warp < c.warps; ++warp)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t mb = 0; mb < w.mBlocks(); ++mb)
          for (int64_t ks = 0; ks < w.kSteps(); ++ks)
            for (int64_t e = 0; e < 8; ++e) {
              int64_t row = 16 * (warp % c.wm + mb * c.wm) + lane / 4 + 8 * (e / 2 % 2);
              int64_t col = 16 * ks + 2 * (lane % 4) + e % 2 + 8 * (e / 4);
              llvm::SmallVector<int64_t, 2> ri = l.regIndex(w.aRegister(mb, ks, e));
              CHECK(l.coordinate(0, ri[0], lane, warp) == row);
              CHECK(l.coordinate(1, ri[1], lane, warp) == col);
            }
  }
  // B laid out as a result on one warp (every warp holding it whole) is a
  // B operand in registers: the pair bRegister(ks, nb, 2 h), (.., 2 h + 1)
  // of lane l is B's row 16 ks + 8 h + l / 4, columns 8 nb + 2 (l % 4) and
  // one more: a row of an 8 x 8 block, two neighbouring columns a lane.
  // movmatrix.trans gives lane l that block's column l / 4, rows 2 (l % 4)
  // and one more: the m16n8k16 B fragment's word h of (ks, nb).
  for (Case c : {Case{32, 32, 1, 1, 1}, Case{32, 16, 1, 1, 4}, Case{64, 32, 1, 1, 2}}) {
    INFO("B of " << c.M << " x " << c.N << " on one warp of " << c.warps);
    WarpMmaTiling w;
    w.K = c.M;
    w.N = c.N;
    TileLayout l = TileLayout::get(WarpMmaTiling::fragmentLayout(&t.ctx, 1, 1), {c.M, c.N});
    REQUIRE(!l.mismatch());
    for (int64_t warp = 0; warp < c.warps; ++warp)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t ks = 0; ks < w.kSteps(); ++ks)
          for (int64_t nb = 0; nb < c.N / 8; ++nb)
            for (int64_t reg = 0; reg < 4; ++reg) {
              int64_t row = 16 * ks + 8 * (reg / 2) + lane / 4;
              int64_t col = 8 * nb + 2 * (lane % 4) + reg % 2;
              llvm::SmallVector<int64_t, 2> ri = l.regIndex(w.bRegister(ks, nb, reg));
              CHECK(l.coordinate(0, ri[0], lane, warp) == row);
              CHECK(l.coordinate(1, ri[1], lane, warp) == col);
            }
  }
  // Another layout is no fragment grid: its result goes through an area.
  CHECK(!WarpMmaTiling::fragmentGrid(
      tile::LayoutAttr::get(&t.ctx, {1, 4}, {4, 8}, {4, 1}, {0, 1}, {})));
}

/// The accumulator fragment of a 64 x 32 bf16 product on one warpgroup
/// (warp w holds rows 16w..16w+15): the GDN scan's S W^T.
static TileLayout scanFragment(Types &t) {
  t.ctx.getOrLoadDialect<tile::TileDialect>();
  std::string why;
  mlir::Type bf16 = t.b.getBF16Type();
  auto tiling = MmaTiling::get(MmaTiling::Kind::Wgmma, 64, 32, 64, bf16, bf16, 4, why);
  REQUIRE(succeeded(tiling));
  return TileLayout::get(tiling->fragmentLayout(&t.ctx), {64, 32});
}

/// `l` for the transposed tile: the same registers, its dims swapped.
static TileLayout swappedDims(TileLayout l) {
  std::swap(l.dims[0], l.dims[1]);
  std::swap(l.shape[0], l.shape[1]);
  return l;
}

TEST_CASE("moving a tile between layouts: which moves stay in their warps", "[layout]") {
  Types t;
  // The scan's output: its product's fragment, transposed.
  TileLayout fragment = scanFragment(t);
  auto layout = [&](llvm::ArrayRef<int64_t> size, llvm::ArrayRef<int64_t> lanes,
                    llvm::ArrayRef<int64_t> warps, llvm::ArrayRef<int64_t> shape) {
    TileLayout l =
        TileLayout::get(tile::LayoutAttr::get(&t.ctx, size, lanes, warps, {0, 1}, {}), shape);
    REQUIRE(!l.mismatch());
    return l;
  };
  llvm::SmallVector<int64_t, 2> swap = {1, 0};
  // 8 rows of the product a lane, each warp its own 16: in the warp.
  TileLayout ownColumns = layout({1, 8}, {16, 2}, {1, 4}, {32, 64});
  CHECK(staysInWarps(fragment, ownColumns, 4, swap));
  // Warps down the tokens instead: every warp reads rows of all four.
  TileLayout tokenWarps = layout({1, 8}, {4, 8}, {4, 1}, {32, 64});
  CHECK(!staysInWarps(fragment, tokenWarps, 4, swap));
  // Neither is the fragment's registers renamed; its own transpose is.
  CHECK(!permutesRegisters(fragment, ownColumns, swap));
  TileLayout renamed = swappedDims(fragment);
  CHECK(permutesRegisters(fragment, renamed, swap));
  CHECK(staysInWarps(fragment, renamed, 4, swap));
  // Without a transpose: the same 16 rows a warp stay, rows dealt out 4 at
  // a time do not; a tile one warp holds whole (the others idle, holding
  // copies) is written by warp 0 alone, so the warps reading it elsewhere
  // leave theirs.
  TileLayout blocks = layout({4, 4}, {4, 8}, {4, 1}, {64, 32});
  CHECK(staysInWarps(fragment, blocks, 4));
  TileLayout rows = layout({1, 4}, {4, 8}, {4, 1}, {64, 32});
  CHECK(!staysInWarps(fragment, rows, 4));
  TileLayout oneWarp = layout({1, 4}, {4, 8}, {1, 1}, {64, 32});
  CHECK(!staysInWarps(oneWarp, rows, 4));
  CHECK(staysInWarps(oneWarp, oneWarp, 1));
}

TEST_CASE("a window of whole spans of a layout is its tile's registers", "[layout]") {
  Types t;
  t.ctx.getOrLoadDialect<tile::TileDialect>();
  // Every element of `to` (the window at `offsets`) is, for every thread,
  // in the register `picked` names of that thread's registers of `from`.
  auto holds = [](const TileLayout &from, const TileLayout &to, llvm::ArrayRef<int64_t> offsets,
                  llvm::ArrayRef<int64_t> picked, int64_t warps) {
    for (int64_t warp = 0; warp < warps; ++warp)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t r = 0; r < to.numRegs(); ++r) {
          llvm::SmallVector<int64_t, 2> in = from.regIndex(picked[r]), out = to.regIndex(r);
          for (unsigned d = 0; d < to.shape.size(); ++d)
            if (from.coordinate(d, in[d], lane, warp) !=
                to.coordinate(d, out[d], lane, warp) + offsets[d])
              return false;
        }
    return true;
  };
  // One warp's mma.sync fragments: 16-row, 8-column spans, lanes first.
  tile::LayoutAttr frag = WarpMmaTiling::fragmentLayout(&t.ctx, 1, 1);
  TileLayout whole = TileLayout::get(frag, {32, 32});
  for (llvm::SmallVector<int64_t, 2> at :
       {llvm::SmallVector<int64_t, 2>{0, 0}, {16, 0}, {16, 16}, {0, 8}, {16, 24}}) {
    int64_t cols = at[1] == 24 ? 8 : 16;
    TileLayout window = TileLayout::get(frag, {16, cols});
    std::optional<llvm::SmallVector<int64_t>> picked = windowRegisters(whole, window, at);
    REQUIRE(picked);
    CHECK(picked->size() == static_cast<size_t>(window.numRegs()));
    CHECK(holds(whole, window, at, *picked, 1));
  }
  // (The check tells registers apart: the first window's are not the lower
  // one's.)
  TileLayout quarter = TileLayout::get(frag, {16, 16});
  std::optional<llvm::SmallVector<int64_t>> first = windowRegisters(whole, quarter, {0, 0});
  REQUIRE(first);
  CHECK(!holds(whole, quarter, {16, 0}, *first, 1));
  // A window splitting a span (8 rows into a 16-row block), or laid out
  // otherwise than its tile, moves.
  CHECK(!windowRegisters(whole, TileLayout::get(frag, {16, 16}), {8, 0}));
  CHECK(!windowRegisters(whole, TileLayout::get(frag, {16, 16}), {0, 4}));
  TileLayout rows =
      TileLayout::get(tile::LayoutAttr::get(&t.ctx, {1, 4}, {8, 4}, {1, 1}, {0, 1}, {}), {16, 16});
  CHECK(!windowRegisters(whole, rows, {0, 0}));
  // Over four warps, each warp's rows: a window of whole warps' rows.
  tile::LayoutAttr fourWarps = tile::LayoutAttr::get(&t.ctx, {1, 4}, {4, 8}, {4, 1}, {0, 1}, {});
  TileLayout tall = TileLayout::get(fourWarps, {64, 32});
  TileLayout lower = TileLayout::get(fourWarps, {32, 32});
  std::optional<llvm::SmallVector<int64_t>> picked = windowRegisters(tall, lower, {32, 0});
  REQUIRE(picked);
  CHECK(holds(tall, lower, {32, 0}, *picked, 4));
  CHECK(!windowRegisters(tall, lower, {8, 0}));
}

TEST_CASE("a TMA ring swizzled for its readers: the scan's U read in the accumulators' layout",
          "[layout]") {
  Types t;
  // U^T joins the accumulators of S W^T (64 state rows x 32 tokens on one
  // warpgroup), so the ring's [32 tokens, 64 rows] f32 tile is read in the
  // fragment layout with its dims swapped: a warp's lanes 8 state rows of 4
  // tokens apart.
  TileLayout read = swappedDims(scanFragment(t));
  REQUIRE(!read.mismatch());
  RingPlan ring;
  ring.swizzleBytes = 128;
  ring.threadSwizzled = true;
  ring.kBlocks = 2;
  ring.kBlockStride = 32 * 128;
  int64_t dense = sharedReadWavefronts(
      read, 4, 1, [](int64_t row, int64_t col) { return (row * 64 + col) * 4; });
  int64_t swizzled = sharedReadWavefronts(
      read, 4, 1, [&](int64_t row, int64_t col) { return ring.threadByte(row, col, 4); });
  // 16 registers; dense, each access finds 8 lanes on each of 8 banks.
  CHECK(dense == 16 * 4);
  CHECK(swizzled == 16);
  // Every element lands once, inside the two 4 KB boxes.
  std::set<int64_t> bytes;
  for (int64_t row = 0; row < 32; ++row)
    for (int64_t col = 0; col < 64; ++col)
      bytes.insert(ring.threadByte(row, col, 4));
  CHECK(bytes.size() == 32 * 64);
  CHECK(*bytes.rbegin() == 2 * 32 * 128 - 4);
  // Rows read whole with 16-byte vectors are conflict-free either way.
  TileLayout rows =
      TileLayout::get(tile::LayoutAttr::get(&t.ctx, {1, 4}, {2, 16}, {4, 1}, {0, 1}, {}), {32, 64});
  REQUIRE(!rows.mismatch());
  CHECK(sharedReadWavefronts(rows, 4, 4, [](int64_t row, int64_t col) {
          return (row * 64 + col) * 4;
        }) == sharedReadWavefronts(rows, 4, 4, [&](int64_t row, int64_t col) {
          return ring.threadByte(row, col, 4);
        }));
}

TEST_CASE("ldmatrix reads: the accumulators' layout from a tile in either orientation",
          "[layout]") {
  Types t;
  TileLayout fragment = scanFragment(t); // [64 state rows, 32 tokens]
  // Read as laid out (rows along the stage's rows): each matrix gives a
  // lane two neighbours of one row, as plain ldmatrix does.
  std::optional<MatrixReads> plain = matrixReads(fragment);
  REQUIRE(plain);
  CHECK(!plain->transposed);
  // The scan's values: [32 tokens, 64 state rows] in the ring, read with
  // the fragment's dims swapped: the two elements of a pair are two
  // tokens, one stage row apart, as ldmatrix.trans gives them.
  TileLayout swapped = swappedDims(fragment);
  std::optional<MatrixReads> trans = matrixReads(swapped);
  REQUIRE(trans);
  CHECK(trans->transposed);
  // 16 registers a thread: 8 matrices of 8 x 8 a warp, each register once,
  // and each pair one element apart along the tokens for every lane.
  REQUIRE(trans->pairs.size() == 8);
  std::set<int64_t> regs;
  for (auto [first, second] : trans->pairs) {
    regs.insert(first);
    regs.insert(second);
    for (int64_t warp = 0; warp < 4; ++warp)
      for (int64_t lane = 0; lane < 32; ++lane) {
        auto a = swapped.regIndex(first), b = swapped.regIndex(second);
        CHECK(swapped.coordinate(0, b[0], lane, warp) ==
              swapped.coordinate(0, a[0], lane, warp) + 1);
        CHECK(swapped.coordinate(1, b[1], lane, warp) == swapped.coordinate(1, a[1], lane, warp));
        // Lane L holds row 2 (L % 4) and column L / 4 of its matrix.
        CHECK(swapped.coordinate(0, a[0], lane, warp) % 8 == 2 * (lane % 4));
        CHECK(swapped.coordinate(1, a[1], lane, warp) % 8 == lane / 4);
      }
  }
  CHECK(regs.size() == 16);
  // A layout of 16-byte vectors along the rows is no set of matrices.
  TileLayout rows =
      TileLayout::get(tile::LayoutAttr::get(&t.ctx, {1, 8}, {4, 8}, {4, 1}, {0, 1}, {}), {32, 64});
  REQUIRE(!rows.mismatch());
  CHECK(!matrixReads(rows));
}
