# SPDX-License-Identifier: Apache-2.0
"""mlcc_dependencies(): the repositories mlcc's Bazel rules need, all defined offline.

Call it from WORKSPACE after the `mlcc` repository itself is declared:

    local_repository(name = "mlcc", path = "/path/to/mlcc")   # or http_archive, ...
    load("@mlcc//bazel:deps.bzl", "mlcc_dependencies")
    mlcc_dependencies()

Debian's Bazel 4.2.3 (`bazel-bootstrap`) cannot download `rules_cc`, `rules_java`,
`platforms` or `remote_coverage_tools`, which `@bazel_tools` refers to, so this defines them
from Debian's packages and mlcc's stand-ins (see third_party/README.md), plus
`@mlcc_llvm16` over /usr/lib/llvm-16. A repository that the caller already defined is left
alone, so a workspace with the real upstream rules keeps them.
"""

def _standin_repository_impl(rctx):
    # The stand-in's files live in the mlcc repository, located through a label so that
    # this works both in mlcc's own workspace and in any workspace depending on @mlcc.
    src = rctx.path(rctx.attr.marker).dirname
    for child in src.readdir():
        if child.basename not in ("WORKSPACE", "WORKSPACE.bazel"):
            rctx.symlink(child, child.basename)
    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)

_standin_repository = repository_rule(
    implementation = _standin_repository_impl,
    attrs = {"marker": attr.label(mandatory = True, allow_single_file = True)},
    local = True,
    doc = "A repository made of one directory of the mlcc source tree (a stand-in).",
)

def _mlcc_build_info_impl(rctx):
    # The git commit of the mlcc source tree, for `mlcc --version` and the fleet manifests
    # (driver/build_id.h), so a Bazel-built and a CMake-built mlcc of one commit print the
    # same commit. $MLCC_GIT_COMMIT overrides it (source tarballs); outside a git checkout,
    # or without git, it is "unknown". A repository rule may run git where an action may
    # not (sandbox, no .git among its inputs); Bazel re-runs it when the server restarts or
    # $MLCC_GIT_COMMIT changes (`bazel sync --configure` forces it).
    commit = rctx.os.environ.get("MLCC_GIT_COMMIT", "")
    if not commit:
        root = rctx.path(rctx.attr.marker).dirname
        git = rctx.which("git")
        if git != None:
            r = rctx.execute([git, "-C", str(root), "rev-parse", "--verify", "-q", "HEAD"])
            if r.return_code == 0:
                commit = r.stdout.strip()
    if not commit or not all([c in "0123456789abcdef" for c in commit.elems()]):
        commit = "unknown"
    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)
    rctx.file("build_commit_gen.h", "#define MLCC_GIT_COMMIT \"%s\"\n" % commit)
    rctx.file("BUILD.bazel", "\n".join([
        "cc_library(",
        "    name = \"commit\",",
        "    hdrs = [\"build_commit_gen.h\"],",
        "    include_prefix = \"driver\",",
        "    visibility = [\"//visibility:public\"],",
        ")",
        "",
    ]))

_mlcc_build_info = repository_rule(
    implementation = _mlcc_build_info_impl,
    attrs = {"marker": attr.label(mandatory = True, allow_single_file = True)},
    environ = ["MLCC_GIT_COMMIT"],
    local = True,
    doc = "@mlcc_build_info: the git commit of the mlcc sources (driver/build_commit.c).",
)

def _define(name, rule, **kwargs):
    if not native.existing_rule(name):
        rule(name = name, **kwargs)

def mlcc_dependencies(
        platforms_path = "/usr/share/bazel/platforms",
        rules_java_path = "/usr/share/bazel/rules/java",
        llvm_path = "/usr/lib/llvm-16"):
    """Defines @platforms, @rules_java, @rules_cc, @remote_coverage_tools, @mlcc_llvm16 and
    @mlcc_build_info.

    Args:
      platforms_path: a checkout of bazelbuild/platforms (Debian: bazel-bootstrap-data).
      rules_java_path: a checkout of bazelbuild/rules_java (Debian: bazel-rules-java).
      llvm_path: LLVM 16's prefix, with include/llvm-c and lib/libLLVM-16.so.
    """
    _define("platforms", native.local_repository, path = platforms_path)
    _define("rules_java", native.local_repository, path = rules_java_path)
    _define(
        "rules_cc",
        _standin_repository,
        marker = Label("//third_party/rules_cc:BUILD.bazel"),
    )
    _define(
        "remote_coverage_tools",
        _standin_repository,
        marker = Label("//third_party/remote_coverage_tools:BUILD.bazel"),
    )
    _define(
        "mlcc_build_info",
        _mlcc_build_info,
        marker = Label("//:WORKSPACE"),
    )
    _define(
        "mlcc_llvm16",
        native.new_local_repository,
        path = llvm_path,
        build_file = str(Label("//third_party:llvm16.BUILD")),
    )
