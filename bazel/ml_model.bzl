# SPDX-License-Identifier: Apache-2.0
"""Bazel rules that compile ONNX models into C static libraries with mlcc.

    load("@mlcc//bazel:ml_model.bzl", "ml_model_library", "ml_model_fleet")

    ml_model_library(name = "detector", model = "detector.onnx")
    cc_binary(name = "app", srcs = ["main.c"], deps = [":detector"])

    ml_model_fleet(name = "detector_fleet", model = "detector.onnx",
                   targets = ["x86", "aarch64", "riscv"])

ml_model_library runs mlcc (built in the exec configuration, like any compiler) for the CPU
of the C/C++ toolchain that the target configuration resolves, so `--config=aarch64`
compiles the model for aarch64 and links it into aarch64 binaries. The action is hermetic:
its inputs are the model, its data files, mlcc and the toolchain's files; it has no `local`
or `no-remote` tag, so a remote cache or remote executors share it. The archive is made
with the toolchain's own `ar` (mlcc's $MLCC_AR). mlcc's kernel cache is off unless the
build setting //bazel:kernel_cache names one (an http(s):// URL, best the HTTP cache of
--remote_cache, or an absolute directory); the outputs are the same bytes either way.

ml_model_fleet builds the library for several targets in one build (a split transition of
the C++ toolchain on --cpu/--crosstool_top; mlcc is built once) and lays them out like the
CMake fleet bundle, in the same bytes (docs/bundle.md):
<name>/<triple>/lib/lib<symbol>.a, <name>/<triple>/include/<symbol>.h, <name>/manifest.json,
plus <name>.tar.gz. See docs/bazel.md.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

# Bazel's --cpu values (and the cpu of a toolchain) -> mlcc's --target aliases.
_CPU_TO_TARGET = {
    "k8": "x86",
    "x86_64": "x86",
    "amd64": "x86",
    "aarch64": "aarch64",
    "arm64": "aarch64",
    "riscv64": "riscv",
    # Bare metal (toolchains/bazel: arm-none-eabi-gcc for the qemu mps2-an386 board).
    "cortex-m4": "cortex-m4",
    "cortex-m55": "cortex-m55",
    "rv32": "rv32",
    "rv32f": "rv32f",
}

# mlcc aliases whose code calls no libm (docs/mcu.md): their libraries add no -lm.
_NO_LIBM = ["cortex-m4", "cortex-m55", "rv32", "rv32f"]

# mlcc alias -> the configuration a fleet member is built in. x86 uses Bazel's
# autoconfigured host gcc; the cross CPUs use Debian's cross gcc (toolchains/bazel), the
# Cortex-M4F its bare-metal arm-none-eabi-gcc.
_TARGET_CONFIGS = {
    "x86": ("k8", "@bazel_tools//tools/cpp:toolchain"),
    "aarch64": ("aarch64", str(Label("//toolchains/bazel:toolchain"))),
    "riscv": ("riscv64", str(Label("//toolchains/bazel:toolchain"))),
    "cortex-m4": ("cortex-m4", str(Label("//toolchains/bazel:toolchain"))),
    "cortex-m55": ("cortex-m55", str(Label("//toolchains/bazel:toolchain"))),
    "rv32": ("rv32", str(Label("//toolchains/bazel:toolchain"))),
    "rv32f": ("rv32f", str(Label("//toolchains/bazel:toolchain"))),
}

MlModelInfo = provider(
    doc = "One compiled model, for rules that package or describe it (ml_model_library provides it).",
    fields = {
        "symbol": "the C symbol prefix (--name)",
        "target": "mlcc's target alias: x86 | aarch64 | riscv | cortex-m4 | cortex-m55 | rv32 | rv32f",
        "cpu": "the -mcpu= given to mlcc, or '' for the target's default",
        "features": "the -mattr= given to mlcc, or '' for the target's default",
        "model": "the model File",
        "library": "the static library File",
        "header": "the header File",
    },
)

# --- the kernel cache setting ------------------------------------------------

KernelCacheInfo = provider(
    doc = "The value of //bazel:kernel_cache (see kernel_cache_setting).",
    fields = {"value": "'' (no kernel cache), an http(s):// URL or an absolute directory"},
)

def _kernel_cache_setting_impl(ctx):
    value = ctx.build_setting_value
    if value and not (value.startswith("http://") or value.startswith("https://") or
                      value.startswith("/")):
        fail("%s: '%s' is neither an http(s):// URL nor an absolute directory" %
             (ctx.label, value))
    return KernelCacheInfo(value = value)

kernel_cache_setting = rule(
    implementation = _kernel_cache_setting_impl,
    build_setting = config.string(flag = True),
    doc = """The kernel cache mlcc uses inside model actions (//bazel:kernel_cache).

    --@mlcc//bazel:kernel_cache=http://cache:8080/mlcc   mlcc --remote-cache=<URL> (recommended:
                                                         the HTTP cache of --remote_cache)
    --@mlcc//bazel:kernel_cache=/var/cache/mlcc          mlcc --cache-dir=<DIR> (a shared disk
                                                         directory; writable by the sandbox)
    unset (default)                                      mlcc --no-cache

    The cache only saves compile time: mlcc's outputs are byte-identical whether a kernel
    comes from it or is compiled, so the actions' outputs stay hermetic.""",
)

def _mlcc_target(cc_toolchain):
    target = _CPU_TO_TARGET.get(cc_toolchain.cpu)
    if target == None:
        fail("ml_model_library: the C++ toolchain's cpu '%s' is not an mlcc target " % cc_toolchain.cpu +
             "(known: %s)" % ", ".join(sorted(_CPU_TO_TARGET.keys())))
    return target

def _mlcc_compile(ctx, mlcc, cc_toolchain, model, data, symbol, cpu, mattr, opts, out_dir,
                  description = None, kernel_cache = "", tuning_records = None):
    """Registers one mlcc action; returns (target alias, library File, header File).

    With `description` (a declared File) mlcc also writes its --describe JSON there and
    archives with its own llvm-ar, as CMake's add_ml_model() does, so a fleet bundle's
    bytes do not depend on the build system (docs/bundle.md); else the toolchain's ar.
    `kernel_cache` is the value of //bazel:kernel_cache ('' = no kernel cache).
    `tuning_records` (a File or None) is passed as --tuning-records (docs/tuning.md) and is
    an input of the action, so a new record set reruns it.
    """
    target = _mlcc_target(cc_toolchain)
    library = ctx.actions.declare_file("%s/lib%s.a" % (out_dir, symbol))
    header = ctx.actions.declare_file("%s/%s.h" % (out_dir, symbol))

    args = ctx.actions.args()
    args.add(model)
    args.add("-o", library)
    args.add("--name=" + symbol)
    args.add("--target=" + target)
    if cpu:
        args.add("-mcpu=" + cpu)
    if mattr:
        args.add("-mattr=" + mattr)

    # The kernel cache only when the user gives one (//bazel:kernel_cache): mlcc's default
    # cache (~/.cache/mlcc) is outside the action's declared world, and the environment has
    # no HOME. A kernel from the cache is byte-identical to a compiled one (mlcc verifies
    # each entry's content hash), so the outputs do not depend on the cache's state.
    execution_requirements = {}
    if kernel_cache.startswith("http://") or kernel_cache.startswith("https://"):
        args.add("--remote-cache=" + kernel_cache)
        execution_requirements["requires-network"] = "1"
    elif kernel_cache:
        args.add("--cache-dir=" + kernel_cache)
    else:
        args.add("--no-cache")
    args.add_all(opts)
    records = []
    if tuning_records:
        args.add("--tuning-records=" + tuning_records.path)
        records = [tuning_records]

    # Inputs: the model, its data, and the toolchain's files (its ar). mlcc itself and its
    # runfiles come with `executable`. The archiver is the target toolchain's own.
    outputs = [library, header]
    env = {"MLCC_AR": cc_toolchain.ar_executable}
    if description:
        args.add("--describe=" + description.path)
        outputs.append(description)
        env = {}
    ctx.actions.run(
        executable = mlcc,
        arguments = [args],
        inputs = depset([model] + data + records, transitive = [cc_toolchain.all_files]),
        outputs = outputs,
        env = env,
        execution_requirements = execution_requirements,
        mnemonic = "MlccCompile",
        progress_message = "Compiling model %s for %s with mlcc" % (model.short_path, target),
    )
    return target, library, header

def _ml_model_library_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    symbol = ctx.attr.symbol or ctx.label.name
    cpu = ctx.attr.cpu
    features = ctx.attr.mattr

    # Outputs in a directory of their own, so the include path exposes only this header.
    target, library, header = _mlcc_compile(
        ctx,
        mlcc = ctx.executable._mlcc,
        cc_toolchain = cc_toolchain,
        model = ctx.file.model,
        data = ctx.files.data,
        symbol = symbol,
        cpu = cpu,
        mattr = features,
        opts = ctx.attr.opts,
        out_dir = "_mlcc/" + ctx.label.name,
        kernel_cache = ctx.attr._kernel_cache[KernelCacheInfo].value,
        tuning_records = ctx.file.tuning_records,
    )

    compilation_context = cc_common.create_compilation_context(
        headers = depset([header]),
        includes = depset([header.dirname]),
    )
    library_to_link = cc_common.create_library_to_link(
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        static_library = library,
    )
    linking_context = cc_common.create_linking_context(
        linker_inputs = depset([cc_common.create_linker_input(
            owner = ctx.label,
            libraries = depset([library_to_link]),
            user_link_flags = depset([] if target in _NO_LIBM else ["-lm"]),
        )]),
    )
    return [
        DefaultInfo(files = depset([library, header])),
        CcInfo(
            compilation_context = compilation_context,
            linking_context = linking_context,
        ),
        MlModelInfo(
            symbol = symbol,
            target = target,
            cpu = cpu,
            features = features,
            model = ctx.file.model,
            library = library,
            header = header,
        ),
        OutputGroupInfo(header = depset([header]), library = depset([library])),
    ]

_LIBRARY_ATTRS = {
    "model": attr.label(
        mandatory = True,
        allow_single_file = [".onnx"],
        doc = "The ONNX model.",
    ),
    "data": attr.label_list(
        allow_files = True,
        doc = "Files the model reads (ONNX external data), at their paths relative to it.",
    ),
    "opts": attr.string_list(
        doc = "Extra mlcc options, e.g. [\"-O3\", \"--input-shape=images=1x3x320x320\"].",
    ),
    "tuning_records": attr.label(
        allow_single_file = [".json"],
        doc = "Tuning records for mlcc --tuning-records (docs/tuning.md).",
    ),
    "cpu": attr.string(doc = "mlcc -mcpu= (default: the target's default CPU)."),
    "mattr": attr.string(doc = "mlcc -mattr= (default: the target's default features)."),
    "symbol": attr.string(
        doc = "The C symbol prefix and file names (mlcc --name; default: the rule's name).",
    ),
    "_mlcc": attr.label(
        default = Label("//:mlcc"),
        executable = True,
        cfg = "exec",
    ),
    "_cc_toolchain": attr.label(
        default = Label("@bazel_tools//tools/cpp:current_cc_toolchain"),
    ),
    "_kernel_cache": attr.label(default = Label("//bazel:kernel_cache")),
}

_ml_model_library = rule(
    implementation = _ml_model_library_impl,
    attrs = _LIBRARY_ATTRS,
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
    incompatible_use_toolchain_transition = True,
    provides = [CcInfo, MlModelInfo],
    doc = "ml_model_library's rule; `features` is Bazel's own attribute, hence `mattr`.",
)

def ml_model_library(name, model, data = [], opts = [], cpu = "", features = "", symbol = "",
                     tuning_records = None, **kwargs):
    """Compiles an ONNX model into a static library + header for the target configuration.

    Depend on it from cc_library/cc_binary/cc_test like any C library and include
    "<symbol>.h". The CPU comes from the resolved C++ toolchain (--cpu / --config=aarch64),
    so one BUILD file serves every target.

    Args:
      name: the target's name; also the C symbol prefix unless `symbol` is given.
      model: the ONNX model (a file label).
      data: files the model reads (ONNX external data), at their paths relative to it.
      opts: extra mlcc options, e.g. ["-O3", "--input-shape=images=1x3x320x320"].
      cpu: mlcc -mcpu= (default: the target's default CPU; DESIGN §4).
      features: mlcc -mattr=, e.g. "+v" for riscv (default: the target's defaults).
        This is mlcc's feature string; Bazel's own `features` attribute is not forwarded.
      symbol: the C symbol prefix and file names (mlcc --name); default: `name`.
      tuning_records: a JSON file of tuning records (mlcc --tuning-records, docs/tuning.md);
        records of other targets or CPUs in it are ignored.
      **kwargs: common attributes (visibility, tags, testonly, ...).
    """
    _ml_model_library(
        name = name,
        model = model,
        data = data,
        opts = opts,
        cpu = cpu,
        mattr = features,
        symbol = symbol,
        tuning_records = tuning_records,
        **kwargs
    )

# --- fleet ------------------------------------------------------------------

def _fleet_transition_impl(settings, attr):
    out = {}
    for target in attr.targets:
        if target not in _TARGET_CONFIGS:
            fail("ml_model_fleet: unknown target '%s' (known: %s)" %
                 (target, ", ".join(sorted(_TARGET_CONFIGS.keys()))))
        cpu, crosstool_top = _TARGET_CONFIGS[target]
        out[target] = {
            "//command_line_option:cpu": cpu,
            "//command_line_option:crosstool_top": crosstool_top,
        }
    return out

_fleet_transition = transition(
    implementation = _fleet_transition_impl,
    inputs = [],
    outputs = [
        "//command_line_option:cpu",
        "//command_line_option:crosstool_top",
    ],
)

def _ml_model_fleet_impl(ctx):
    # The split transition applies to the C++ toolchain only: mlcc stays one exec-configured
    # binary for every target (a transitioned dependency would rebuild it per target, since
    # Bazel 4.2 derives a distinct exec configuration from each transitioned one).
    symbol = ctx.attr.symbol
    bundle = ctx.actions.declare_directory(ctx.label.name)
    tarball = ctx.actions.declare_file(ctx.label.name + ".tar.gz")
    args = ctx.actions.args()
    args.add("--mlcc", ctx.executable._mlcc)
    args.add("--out-dir", bundle.path)
    args.add("--tarball", tarball)
    args.add("--symbol", symbol)
    args.add("--model", ctx.file.model)
    toolchains = ctx.split_attr._cc_toolchain
    libraries = []
    headers = []
    descriptions = []
    for alias in ctx.attr.targets:
        cc_toolchain = toolchains[alias][cc_common.CcToolchainInfo]
        out_dir = "_mlcc_fleet/%s/%s" % (ctx.label.name, alias)
        description = ctx.actions.declare_file("%s/%s.json" % (out_dir, symbol))
        target, library, header = _mlcc_compile(
            ctx,
            mlcc = ctx.executable._mlcc,
            cc_toolchain = cc_toolchain,
            model = ctx.file.model,
            data = ctx.files.data,
            symbol = symbol,
            cpu = ctx.attr.cpu.get(alias, ""),
            mattr = ctx.attr.mattr.get(alias, ""),
            opts = ctx.attr.opts,
            out_dir = out_dir,
            description = description,
            kernel_cache = ctx.attr._kernel_cache[KernelCacheInfo].value,
            tuning_records = ctx.file.tuning_records,
        )
        if target != alias:
            fail("ml_model_fleet: the toolchain for %s targets %s" % (alias, target))
        args.add("--member", "%s,%s,%s,%s" % (alias, library.path, header.path, description.path))
        libraries.append(library)
        headers.append(header)
        descriptions.append(description)
    ctx.actions.run(
        executable = ctx.executable._bundler,
        arguments = [args],
        inputs = [ctx.file.model] + libraries + headers + descriptions,
        tools = [ctx.executable._mlcc],
        outputs = [bundle, tarball],
        mnemonic = "MlccFleetBundle",
        progress_message = "Bundling %s for %s" % (ctx.label.name, ", ".join(ctx.attr.targets)),
    )
    return [
        DefaultInfo(files = depset([bundle, tarball])),
        OutputGroupInfo(
            bundle = depset([bundle]),
            tarball = depset([tarball]),
            libraries = depset(libraries),
            headers = depset(headers),
            descriptions = depset(descriptions),
        ),
    ]

_ml_model_fleet = rule(
    implementation = _ml_model_fleet_impl,
    attrs = {
        "model": attr.label(mandatory = True, allow_single_file = [".onnx"]),
        "data": attr.label_list(allow_files = True),
        "targets": attr.string_list(mandatory = True, allow_empty = False),
        "opts": attr.string_list(),
        "cpu": attr.string_dict(),
        "mattr": attr.string_dict(),
        "tuning_records": attr.label(allow_single_file = [".json"]),
        "symbol": attr.string(mandatory = True),
        "_cc_toolchain": attr.label(
            default = Label("@bazel_tools//tools/cpp:current_cc_toolchain"),
            cfg = _fleet_transition,
        ),
        "_bundler": attr.label(
            default = Label("//bazel:fleet_bundle.py"),
            allow_single_file = True,
            executable = True,
            cfg = "exec",
        ),
        "_mlcc": attr.label(
            default = Label("//:mlcc"),
            executable = True,
            cfg = "exec",
        ),
        "_kernel_cache": attr.label(default = Label("//bazel:kernel_cache")),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
    doc = "ml_model_fleet's rule; `features` is Bazel's own attribute, hence `mattr`.",
)

def ml_model_fleet(
        name,
        model,
        targets = ["x86", "aarch64", "riscv"],
        data = [],
        opts = [],
        cpu = {},
        features = {},
        symbol = "",
        tuning_records = None,
        **kwargs):
    """One model compiled for several targets in one build, bundled like the CMake fleet.

    Produces the directory <name>/ (<triple>/lib/lib<symbol>.a, <triple>/include/<symbol>.h,
    manifest.json; docs/bundle.md) and <name>.tar.gz, byte-identical when rebuilt and to
    CMake's ml_model_bundle(<name> ...) of the same model and targets. Output groups
    `libraries`, `headers` and `descriptions` (mlcc --describe) name the per-target files.

    Args:
      name: the bundle's name.
      model: the ONNX model.
      targets: mlcc target aliases: x86, aarch64, riscv, cortex-m4, cortex-m55, rv32, rv32f.
      data: files the model reads (ONNX external data).
      opts: extra mlcc options for every target.
      cpu: {alias: -mcpu=} for targets that do not use their default CPU.
      features: {alias: -mattr=} for targets that do not use their default features.
      symbol: the C symbol prefix (default: the model file's name without .onnx).
      tuning_records: a JSON file of tuning records (mlcc --tuning-records, docs/tuning.md);
        each target uses the records of its own triple and CPU.
      **kwargs: common attributes (visibility, tags, ...).
    """
    if not symbol:
        base = model.split(":")[-1].split("/")[-1]
        symbol = base[:-len(".onnx")] if base.endswith(".onnx") else base
    _ml_model_fleet(
        name = name,
        model = model,
        data = data,
        targets = targets,
        opts = opts,
        cpu = cpu,
        mattr = features,
        symbol = symbol,
        tuning_records = tuning_records,
        **kwargs
    )
