import os
import sys
import lit.formats

config.name = "Kiln"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.join(config.kiln_src_root, "tests", "lit")
config.test_exec_root = os.path.join(config.kiln_tools_dir, "..", "tests", "lit")
config.excludes = ["Inputs"]
config.environment["PATH"] = os.pathsep.join(
    [config.kiln_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%ops", os.path.join(config.kiln_src_root, "ops")))
config.substitutions.append(("%kiln_src_root", config.kiln_src_root))
config.substitutions.append(("%python", sys.executable))

# ptxas: tests that assemble PTX run where the CUDA toolkit is installed.
import shutil
ptxas = os.environ.get("KILN_PTXAS") or (
    "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else shutil.which("ptxas"))
if ptxas:
    config.available_features.add("ptxas")
    config.environment["KILN_PTXAS"] = ptxas

# nvcc: tests that compile Kiln's CUDA source run where the toolkit has it.
nvcc = os.environ.get("KILN_NVCC") or (
    "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else shutil.which("nvcc"))
if nvcc:
    config.available_features.add("nvcc")
    config.environment["KILN_NVCC"] = nvcc
    config.substitutions.append(("%nvcc", nvcc))

# cuobjdump (with nvdisasm) for SASS checks: the CUDA toolkit's, or NVIDIA's
# pip packages that tools/setup.sh installs into the build tree.
cuda_tools = os.path.join(config.kiln_tools_dir, "..", "cuda-tools", "nvidia", "cu13", "bin")
cuobjdump = os.environ.get("KILN_CUOBJDUMP")
for d in [cuda_tools, "/usr/local/cuda/bin"] + os.environ.get("PATH", "").split(os.pathsep):
    if cuobjdump:
        break
    if os.path.exists(os.path.join(d, "cuobjdump")) and os.path.exists(os.path.join(d, "nvdisasm")):
        cuobjdump = os.path.join(d, "cuobjdump")
if cuobjdump:
    config.available_features.add("cuobjdump")
    config.environment["PATH"] = os.pathsep.join(
        [os.path.dirname(cuobjdump), config.environment["PATH"]])
