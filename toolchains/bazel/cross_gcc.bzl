# SPDX-License-Identifier: Apache-2.0
"""debian_cross_gcc(): a cc_toolchain for one of Debian's cross gcc packages.

Debian 12 ships gcc-aarch64-linux-gnu and gcc-riscv64-linux-gnu with their libc under
/usr/<triple>. The toolchain reuses Bazel's own Unix toolchain configuration rule
(@bazel_tools//tools/cpp:unix_cc_toolchain_config.bzl, what cc_configure generates for the
host), so features, archiving ("ar rcsD") and linking behave exactly as on the host.
"""

load("@bazel_tools//tools/cpp:unix_cc_toolchain_config.bzl", "cc_toolchain_config")

def debian_cross_gcc(name, cpu, triple, gcc_version = "12", host = False):
    """Defines cc-compiler-<name> (a cc_toolchain) and its configuration.

    Args:
      name: the toolchain's short name, e.g. "aarch64".
      cpu: Bazel's --cpu value for it (the key in the cc_toolchain_suite).
      triple: the GNU triple of the tools, e.g. "aarch64-linux-gnu".
      gcc_version: the major version in /usr/lib/gcc-cross/<triple>/<version>.
      host: the build machine's own gcc (/usr/bin/gcc, /usr/lib/gcc/<triple>).
    """
    config = "%s_config" % name
    tool = "/usr/bin/%s" if host else "/usr/bin/%s-%%s" % triple
    gcc_dir = "/usr/lib/%s/%s/%s" % ("gcc" if host else "gcc-cross", triple, gcc_version)
    cc_toolchain_config(
        name = config,
        cpu = cpu,
        compiler = "gcc",
        toolchain_identifier = "debian-%s-gcc" % triple,
        host_system_name = "x86_64-linux-gnu",
        target_system_name = triple,
        target_libc = "glibc",
        abi_version = "gcc",
        abi_libc_version = "glibc",
        cxx_builtin_include_directories = [
            gcc_dir + "/include",
            gcc_dir + "/include-fixed",
            "/usr/local/include",
            "/usr/%s/include" % triple,
            "/usr/include/%s" % triple,
            "/usr/include",
        ],
        tool_paths = {
            "ar": tool % "ar",
            "ld": tool % "ld",
            "cpp": tool % "cpp",
            "gcc": tool % "gcc",
            "dwp": tool % "dwp",
            "gcov": tool % "gcov",
            "llvm-cov": "None",  # read unconditionally by unix_cc_toolchain_config; unused
            "nm": tool % "nm",
            "objcopy": tool % "objcopy",
            "objdump": tool % "objdump",
            "strip": tool % "strip",
        },
        compile_flags = [
            "-U_FORTIFY_SOURCE",
            "-fstack-protector",
            "-Wall",
            "-fno-omit-frame-pointer",
        ],
        opt_compile_flags = [
            "-g0",
            "-O2",
            "-D_FORTIFY_SOURCE=1",
            "-DNDEBUG",
            "-ffunction-sections",
            "-fdata-sections",
        ],
        dbg_compile_flags = ["-g"],
        cxx_flags = ["-std=c++14"],
        link_flags = [
            "-fuse-ld=bfd",
            "-Wl,-no-as-needed",
            "-Wl,-z,relro,-z,now",
            "-pass-exit-codes",
        ],
        # C only: Debian's gcc-<triple> has no libstdc++ (install g++-<triple> and add
        # "-lstdc++" for C++).
        link_libs = ["-lm"],
        opt_link_flags = ["-Wl,--gc-sections"],
        unfiltered_compile_flags = [
            "-fno-canonical-system-headers",
            "-Wno-builtin-macro-redefined",
            "-D__DATE__=\"redacted\"",
            "-D__TIMESTAMP__=\"redacted\"",
            "-D__TIME__=\"redacted\"",
        ],
        coverage_compile_flags = ["--coverage"],
        coverage_link_flags = ["--coverage"],
        supports_start_end_lib = False,
    )
    native.cc_toolchain(
        name = "cc-compiler-%s" % name,
        toolchain_identifier = "debian-%s-gcc" % triple,
        toolchain_config = ":" + config,
        all_files = ":empty",
        ar_files = ":empty",
        as_files = ":empty",
        compiler_files = ":empty",
        dwp_files = ":empty",
        linker_files = ":empty",
        objcopy_files = ":empty",
        strip_files = ":empty",
        supports_param_files = 1,
    )

def debian_bare_metal_gcc(name, cpu, triple, arch_flags, gcc_version):
    """Defines cc-compiler-<name>: Debian's bare-metal gcc with picolibc (no OS).

    For the microcontroller boards of tests/mcu (docs/mcu.md): compiles and links with
    |arch_flags| and picolibc's specs, no start files (a program links a board library such
    as //toolchains/bazel:board_mps2_an386: vector table, start-up, linker script), stdio and
    exit through picolibc's semihosting library, no stack protector, no _FORTIFY_SOURCE, no
    libm unless a program asks for it. Link statically (--dynamic_mode=off, .bazelrc).

    Args:
      name: the toolchain's short name, e.g. "cortex-m4".
      cpu: Bazel's --cpu value for it (ml_model_library maps it to mlcc's --target).
      triple: the GNU triple of the tools, e.g. "arm-none-eabi".
      arch_flags: the core's compiler flags, e.g. ["-mcpu=cortex-m4", "-mthumb", ...].
      gcc_version: the version folder in /usr/lib/gcc/<triple>/.
    """
    config = "%s_config" % name
    tool = "/usr/bin/%s-%%s" % triple
    gcc_dir = "/usr/lib/gcc/%s/%s" % (triple, gcc_version)
    cc_toolchain_config(
        name = config,
        cpu = cpu,
        compiler = "gcc",
        toolchain_identifier = "debian-%s-%s-gcc" % (triple, name),
        host_system_name = "x86_64-linux-gnu",
        target_system_name = triple,
        target_libc = "picolibc",
        abi_version = "gcc",
        abi_libc_version = "picolibc",
        cxx_builtin_include_directories = [
            "/usr/lib/picolibc/%s/include" % triple,
            gcc_dir + "/include",
            gcc_dir + "/include-fixed",
        ],
        tool_paths = {
            "ar": tool % "ar",
            "ld": tool % "ld",
            "cpp": tool % "cpp",
            "gcc": tool % "gcc",
            "dwp": tool % "dwp",
            "gcov": tool % "gcov",
            "llvm-cov": "None",
            "nm": tool % "nm",
            "objcopy": tool % "objcopy",
            "objdump": tool % "objdump",
            "strip": tool % "strip",
        },
        compile_flags = arch_flags + ["--specs=picolibc.specs", "-Wall"],
        opt_compile_flags = ["-g0", "-O2", "-DNDEBUG", "-ffunction-sections", "-fdata-sections"],
        dbg_compile_flags = ["-g"],
        cxx_flags = ["-std=c++14"],
        link_flags = arch_flags + [
            "--specs=picolibc.specs",
            "-nostartfiles",
            "-Wl,--no-warn-rwx-segments",
            "-Wl,--no-warn-execstack",
        ],
        # picolibc's stdio and exit over semihosting (qemu -semihosting), libc, its libm (for
        # the programs: mlcc's microcontroller code calls none), libgcc.
        link_libs = ["-lsemihost", "-lc", "-lm", "-lgcc"],
        opt_link_flags = ["-Wl,--gc-sections"],
        unfiltered_compile_flags = [
            "-fno-canonical-system-headers",
            "-Wno-builtin-macro-redefined",
            "-D__DATE__=\"redacted\"",
            "-D__TIMESTAMP__=\"redacted\"",
            "-D__TIME__=\"redacted\"",
        ],
        coverage_compile_flags = ["--coverage"],
        coverage_link_flags = ["--coverage"],
        supports_start_end_lib = False,
    )
    native.cc_toolchain(
        name = "cc-compiler-%s" % name,
        toolchain_identifier = "debian-%s-%s-gcc" % (triple, name),
        toolchain_config = ":" + config,
        all_files = ":empty",
        ar_files = ":empty",
        as_files = ":empty",
        compiler_files = ":empty",
        dwp_files = ":empty",
        linker_files = ":empty",
        objcopy_files = ":empty",
        strip_files = ":empty",
        supports_param_files = 1,
    )
