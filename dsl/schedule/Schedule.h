//===- Schedule.h - YAML schedules: load, validate, attach ------*- C++ -*-===//
#ifndef KILN_DSL_SCHEDULE_SCHEDULE_H
#define KILN_DSL_SCHEDULE_SCHEDULE_H

#include "dsl/Diagnostics.h"
#include "dsl/lang/Compile.h"
#include "dsl/schedule/Target.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::tile {
class KernelOp;
class ScheduleAttr;
} // namespace kiln::tile

namespace kiln {

struct Named {
  std::string name;
  SrcPos pos;
};

struct Role {
  Named name;
  int64_t firstWarp = 0, numWarps = 0;
  SrcPos warpsPos;
  int64_t regs = 0;
  SrcPos regsPos;
  std::vector<Named> ops;
  /// `issues: mma`: the role issues the computing role's tensor-core
  /// products and owns no ops.
  bool issuesMma = false;
  SrcPos issuesPos;
  /// `mma:` the matrix instruction of the products this role runs, where
  /// it differs from the schedule's (empty name: the schedule's).
  Named mma;
};

/// `layouts:` the thread layout of the tile one op makes (by op id): its
/// lanes per dim and, optionally, each thread's vector (`size`) and the
/// warps per dim. What is left out is filled in as for the default layout.
struct LayoutRequest {
  Named op;
  std::vector<int64_t> size, lanes, warps;
};

struct Pipeline {
  Named name;
  std::vector<Named> buffers;
  int64_t depth = 1;
  SrcPos depthPos;
  Named copy;
};

/// A schedule as written in YAML, with the position of everything that a
/// later check may need to blame.
struct Schedule {
  std::string path, text;
  const TargetDesc *target = nullptr;
  /// Set before loading to compile the schedule for another target (its
  /// twin): `target` becomes this one, a tensor-core `mma` becomes this
  /// target's family (tcgen05 <-> wgmma) and a tensor-memory budget is
  /// dropped; everything else stays as written and is checked again.
  const TargetDesc *retarget = nullptr;
  const TargetDesc *writtenTarget = nullptr; // as the YAML says
  SrcPos targetPos;
  Named op; // the kernel it schedules; empty name: the source's only kernel
  std::map<std::string, lang::ExternalValue> params;
  std::map<std::string, SrcPos> paramPos;
  std::vector<Named> grid;
  int64_t warps = 4;
  SrcPos warpsPos;
  int64_t persistent = 0; // resident CTAs per SM looping over the grid; 0: one CTA per tile
  SrcPos persistentPos;
  Named mma{"none", {}};
  /// Tensor-core operands in shared memory: swizzled (a row's 16-byte pieces
  /// permuted, free of bank conflicts) or plain core matrices.
  bool swizzle = true;
  SrcPos swizzlePos;
  /// Tensor-core operands that are not K-major (MN-major): gathered through
  /// shared memory into whole 16-byte pieces (`gather`, the default), or
  /// stored element by element (`direct`: fewer registers, bank conflicts).
  bool gatherMnMajor = true;
  SrcPos mnMajorPos;
  std::vector<Role> roles;
  std::vector<Pipeline> pipelines;
  std::vector<LayoutRequest> layouts;
  /// Loop-carried vars (by their `var` name) kept where the tensor cores
  /// accumulate across iterations: `tensor_memory: [S]` under tcgen05, in
  /// tensor-memory columns; `registers: [S]` under wgmma, in the update
  /// product's accumulator fragment. `residentKey` is the key written.
  /// Dropped by a twin for a target without tensor memory.
  std::vector<Named> resident;
  SrcPos residentPos;
  std::string residentKey;
  int64_t smemBudget = 0, tmemBudget = 0, regBudget = 0;
  SrcPos smemPos, tmemPos, regPos;
  /// A kernel of an op launched beside the launch before it (a second,
  /// high-priority stream) instead of after it: it must `wait` for what it
  /// reads from that kernel, which `signal`s it.
  bool overlap = false;
  SrcPos overlapPos;
  /// With `overlap`: launched beside, each of the kernel's CTAs takes an SM
  /// to itself. The op's manifest gives the launch the target's whole
  /// shared memory to ask for then (`beside_shared_bytes`), so that no
  /// other CTA, of it or of the kernel beside, shares the SM (a
  /// latency-bound scan beside a kernel that fills the rest of the GPU).
  bool exclusive = false;
  SrcPos exclusivePos;
  /// A kernel of an op launched early (CUDA's programmatic dependent
  /// launch): its CTAs may start while the launch before it finishes. It
  /// waits (`tile.await_earlier`) before its first access to a tensor an
  /// earlier launch of the op writes, or reads where it writes; what it
  /// reads of the op's inputs before that (a state, say) comes meanwhile.
  bool earlyStart = false;
  SrcPos earlyStartPos;
  /// For an op of several kernels: one schedule per kernel named under
  /// `kernels:` (its `op` is the kernel). Each starts from this schedule's
  /// target, params, warps, mma, persistent and budgets; grid, roles,
  /// pipelines and layouts are its own. Kernels without a section use this schedule.
  std::vector<Schedule> sections;
  /// The section for `kernel`, or this schedule.
  const Schedule &forKernel(const std::string &kernel) const {
    for (const Schedule &s : sections)
      if (s.op.name == kernel)
        return s;
    return *this;
  }

  /// Registers per thread the CTA launches with: the largest role budget,
  /// or, when roles reallocate with setmaxnreg, the average that covers them.
  int64_t launchRegs() const {
    std::vector<std::pair<int64_t, int64_t>> rw;
    for (const Role &r : roles)
      rw.push_back({r.regs, r.numWarps});
    return launchRegisters(rw, warps);
  }

  /// The schedule of the op's float64 reference: the same tiling (params,
  /// grid order) on the CPU target, without what only a GPU does (roles,
  /// pipelines, layouts, tensor cores, resident state, overlap, budgets).
  Schedule cpuReference() const;

  /// Formats a diagnostic at a position of this YAML file.
  std::string diag(SrcPos pos, const std::string &message, const char *kind = "error") const {
    return formatDiagnostic(path, text, pos, kind, message);
  }
};

/// Reads and validates a schedule file on its own (schema, target limits,
/// warp roles, register budget). Prints errors with the YAML file, line and
/// column to `errs`. Never throws.
bool loadSchedule(const std::string &path, Schedule &out, llvm::raw_ostream &errs) noexcept;

/// Checks a schedule against the kernel it schedules (grid axes, op IDs,
/// shared memory of its pipelines) and attaches it as #tile.schedule.
bool applySchedule(const Schedule &schedule, tile::KernelOp kernel, llvm::raw_ostream &errs);

/// Shared-memory bytes the schedule's pipelines need for this kernel.
int64_t pipelineSmemBytes(const Schedule &schedule, tile::KernelOp kernel);

/// The loop (an scf.for) and the index of its carried value that `init`
/// initialises, as a `var` carried by a loop is named by its first value;
/// null when `init` starts no loop's carried value.
std::pair<mlir::Operation *, unsigned> loopCarrying(mlir::Operation *init);

} // namespace kiln

#endif
