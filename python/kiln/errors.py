"""The package's exceptions.

Argument mistakes at a kernel call raise the built-in TypeError / ValueError
(wrong type, wrong shape), as a Python function would; everything the Kiln
toolchain or the CUDA driver reports raises KilnError, so callers can tell
"my arguments are wrong" from "the tool failed".
"""


class KilnError(RuntimeError):
    """The kiln binary, its cache, a manifest or the CUDA driver failed.

    A RuntimeError, as the bench scripts' loader before this package raised,
    so code catching that keeps working.
    """


class CompileError(KilnError):
    """`kiln compile` rejected the source or schedule.

    `stderr` holds the compiler's diagnostics, which name file:line:col;
    `command` the command line that ran and `returncode` its exit status.
    """

    def __init__(self, command, returncode, stderr):
        self.command = list(command)
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(f"{' '.join(self.command)} failed (exit {returncode}):\n{stderr.rstrip()}")
