# SPDX-License-Identifier: Apache-2.0
"""Offline stand-in for @rules_cc//cc:defs.bzl: Bazel's native C/C++ rules, re-exported.

Bazel 4.2's @bazel_tools loads these names from @rules_cc; upstream rules_cc 0.0.x wraps the
same native rules, so nothing changes for the build.
"""

def cc_binary(**attrs):
    """native.cc_binary"""
    native.cc_binary(**attrs)

def cc_import(**attrs):
    """native.cc_import"""
    native.cc_import(**attrs)

def cc_library(**attrs):
    """native.cc_library"""
    native.cc_library(**attrs)

def cc_proto_library(**attrs):
    """native.cc_proto_library"""
    native.cc_proto_library(**attrs)

def cc_test(**attrs):
    """native.cc_test"""
    native.cc_test(**attrs)

def cc_toolchain(**attrs):
    """native.cc_toolchain"""
    native.cc_toolchain(**attrs)

def cc_toolchain_suite(**attrs):
    """native.cc_toolchain_suite"""
    native.cc_toolchain_suite(**attrs)

def fdo_prefetch_hints(**attrs):
    """native.fdo_prefetch_hints"""
    native.fdo_prefetch_hints(**attrs)

def fdo_profile(**attrs):
    """native.fdo_profile"""
    native.fdo_profile(**attrs)

def objc_import(**attrs):
    """native.objc_import"""
    native.objc_import(**attrs)

def objc_library(**attrs):
    """native.objc_library"""
    native.objc_library(**attrs)
