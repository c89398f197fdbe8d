//===- Pipelines.cpp - pass pipelines from tile IR to LLVM ----------------===//
#include "lowering/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

void kiln::buildCpuToLLVMPipeline(mlir::OpPassManager &pm) {
  using namespace mlir;
  pm.addPass(createTileApplySchedule());
  pm.addPass(createTileHoistLoads());
  pm.addPass(createConvertTileToSCF());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true; // bf16 <-> f32 as integer ops: no soft-float calls in the JIT
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createExpandF8E4M3());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void kiln::buildGpuKernelPipeline(mlir::OpPassManager &pm) {
  using namespace mlir;
  pm.addPass(createTileApplySchedule());
  pm.addPass(createTileHoistLoads());
  pm.addPass(createTileNarrowIndexDivision());
  pm.addPass(createTileInvariantDivisors());
  pm.addPass(createTileAssignLayouts());
  pm.addPass(createConvertTileToNVVM());
  pm.addPass(createExpandF8E4M3());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void kiln::buildGpuKernelToLLVMPipeline(mlir::OpPassManager &pm) {
  using namespace mlir;
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  ArithToLLVMConversionPassOptions arith;
  arith.indexBitwidth = 64;
  pm.addPass(createArithToLLVMConversionPass(arith));
  ConvertControlFlowToLLVMPassOptions cf;
  cf.indexBitwidth = 64;
  pm.addPass(createConvertControlFlowToLLVMPass(cf));
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void kiln::buildCudaSourcePipeline(mlir::OpPassManager &pm) {
  using namespace mlir;
  arith::ArithIntRangeNarrowingOptions narrow;
  narrow.bitwidthsSupported = {32};
  pm.addPass(arith::createArithIntRangeNarrowing(narrow));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void kiln::buildNvvmPipeline(mlir::OpPassManager &pm) {
  buildGpuKernelPipeline(pm);
  buildGpuKernelToLLVMPipeline(pm);
}

void kiln::registerAllKilnPasses() {
  registerKilnPasses();
  mlir::PassPipelineRegistration<>("kiln-cpu-to-llvm",
                                   "Scheduled tile IR to the LLVM dialect for the CPU JIT",
                                   buildCpuToLLVMPipeline);
  mlir::PassPipelineRegistration<>(
      "kiln-nvvm", "Scheduled tile IR to LLVM + NVVM for the PTX backend", buildNvvmPipeline);
  mlir::PassPipelineRegistration<>(
      "kiln-gpu-kernel",
      "Scheduled tile IR to structured GPU kernels (scf, arith, llvm, nvvm): what both the "
      "PTX and the CUDA C++ emitters start from",
      buildGpuKernelPipeline);
  mlir::PassPipelineRegistration<>(
      "kiln-cuda-source",
      "Structured GPU kernels with bounded index arithmetic in 32 bits: what the CUDA C++ "
      "emitter prints",
      buildCudaSourcePipeline);
}
