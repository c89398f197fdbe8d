//===- Flags.cpp - tile.signal and tile.wait in a GPU kernel --------------===//
//
// Flags let a kernel run beside the kernel launched before it and read what
// that kernel wrote as soon as it is there: the writer's programs signal a
// flag once their stores are visible, the reader waits on it before its
// loads (and its TMA copies). A kernel started early waits for the launch
// before it as a whole (griddepcontrol).
//
//===----------------------------------------------------------------------===//
#include "lowering/conversion/TileToNVVM/GpuKernelLowering.h"

using namespace mlir;
using namespace kiln::tile;

namespace kiln::nvvm {

/// The flag's address: one i32 element of the view.
Value GpuKernelLowering::flagAddress(Value view, ValueRange indices) {
  return elementAddress(views[view], mapped(indices), b.getI32Type());
}

static void inlinePtx(OpBuilder &b, Location loc, StringRef text, StringRef constraints,
                      ValueRange operands) {
  LLVM::InlineAsmOp::create(b, loc, TypeRange(), operands, b.getStringAttr(text),
                            b.getStringAttr(constraints), b.getUnitAttr(), UnitAttr(),
                            LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr());
}

LogicalResult GpuKernelLowering::lowerGridDependency(StringRef instruction) {
  // As inline asm that clobbers memory, not NVVM's griddepcontrol op: LLVM
  // takes that intrinsic to touch no memory, so nothing would keep a load
  // of what the launch before writes from moving above the wait.
  inlinePtx(b, loc(), instruction, "~{memory}", ValueRange{});
  return success();
}

LogicalResult GpuKernelLowering::lowerSignal(SignalOp op) {
  // Every thread's stores must be in before the flag goes up: all of the
  // CTA's threads meet, which a kernel of several roles (and bulk stores
  // still in flight) cannot promise here.
  if (plan.roles.size() != 1 || !plan.storeRings.empty())
    return op.emitOpError("needs a kernel without roles or store rings: all of its threads "
                          "meet before the flag is set");
  Value address = flagAddress(op.getView(), op.getIndices());
  Value value = regs[op.getValue()][0];
  // Each thread's stores are ordered before the async proxy's accesses
  // (the reader's TMA copies), so the reader needs no proxy fence on its
  // chain of copies; then all meet.
  inlinePtx(b, loc(), "fence.proxy.async.global;", "", ValueRange{});
  syncRole();
  OpBuilder::InsertionGuard guard(b);
  enterLeaderOnly();
  // A release at GPU scope: cumulative, so it carries the stores the
  // barrier ordered before it. (Not fence.acq_rel: its acquire half
  // invalidates the SM's L1, under the other CTAs there: the chunk kernel
  // of the split prefill was 7% slower, bench/RESULTS.md.)
  inlinePtx(b, loc(), "st.release.gpu.global.b32 [$0], $1;", "l,r", ValueRange{address, value});
  return success();
}

LogicalResult GpuKernelLowering::lowerWait(WaitOp op) {
  Value address = flagAddress(op.getView(), op.getIndices());
  Value value = regs[op.getValue()][0];
  // Read until the flag holds the value, sleeping between reads, then
  // acquire (a relaxed read and an acquire fence: the fence invalidates the
  // SM's L1, which an acquiring read in the loop did on every poll, under
  // the CTAs beside this one; the chunk kernel beside a waiting scan ran
  // 1.5-5x slower). After 10 s a trap ends the kernel with an error instead
  // of a hang (a device that does not run the signalling kernel beside this
  // one). The writer fenced the async proxy before its release
  // (lowerSignal).
  inlinePtx(b, loc(),
            "{\n\t.reg .pred p;\n\t.reg .b32 f;\n\t.reg .b64 t0, t1;\n\t"
            "ld.relaxed.gpu.global.b32 f, [$0];\n\t"
            "setp.eq.b32 p, f, $1;\n\t"
            "@p bra FLAG_DONE;\n\t"
            "mov.u64 t0, %globaltimer;\n"
            "FLAG_WAIT:\n\t"
            "nanosleep.u32 64;\n\t"
            "ld.relaxed.gpu.global.b32 f, [$0];\n\t"
            "setp.eq.b32 p, f, $1;\n\t"
            "@p bra FLAG_DONE;\n\t"
            "mov.u64 t1, %globaltimer;\n\t"
            "sub.u64 t1, t1, t0;\n\t"
            "setp.lt.u64 p, t1, 10000000000;\n\t"
            "@p bra FLAG_WAIT;\n\t"
            "trap;\n"
            "FLAG_DONE:\n\t"
            "fence.acquire.gpu;\n\t}",
            "l,r", ValueRange{address, value});
  // Polled for other roles: count it passed, a release at CTA scope that
  // carries the acquire above (cumulativity) to the roles that follow.
  const FlagWaitPlan *f = plan.flagWaitOf(op);
  if (!f || f->progressOffset < 0)
    return success();
  // (An atomic add: compute-sanitizer's racecheck takes a plain store
  // beside the followers' reads for a race.)
  inlinePtx(b, loc(), "red.release.cta.shared::cta.add.u32 [$0], 1;", "l",
            ValueRange{sharedAddress(f->progressOffset)});
  return success();
}

void GpuKernelLowering::followFlag(const FlagWaitPlan &f) {
  // This role's own count of the wait, then until the poller's reaches it
  // (an acquire at CTA scope: the reads after it see what the flag's
  // writer stored). The poller is usually ahead: one shared-memory read.
  Value counter = flagsPassed[&f - plan.flagWaits.data()];
  bumpCounter(counter);
  Value passed = LLVM::LoadOp::create(b, loc(), b.getI32Type(), counter);
  inlinePtx(b, loc(),
            "{\n\t.reg .pred p;\n\t.reg .b32 n;\n\t"
            "atom.acquire.cta.shared::cta.or.b32 n, [$0], 0;\n\t"
            "setp.ge.s32 p, n, $1;\n\t"
            "@p bra POLLED_DONE;\n"
            "POLLED_WAIT:\n\t"
            "nanosleep.u32 32;\n\t"
            "atom.acquire.cta.shared::cta.or.b32 n, [$0], 0;\n\t"
            "setp.ge.s32 p, n, $1;\n\t"
            "@!p bra POLLED_WAIT;\n"
            "POLLED_DONE:\n\t}",
            "l,r", ValueRange{sharedAddress(f.progressOffset), passed});
}

Value GpuKernelLowering::sharedAddress(int64_t byteOffset) {
  return LLVM::PtrToIntOp::create(b, loc(), b.getI64Type(), smemAt(cIndex(byteOffset)));
}

} // namespace kiln::nvvm
