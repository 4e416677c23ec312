{
  "variables": {
    # -Werror for CI and development builds only (npm run build, .ci/run set GYP_DEFINES): a user's
    # source build must not fail because a newer compiler grew a new warning.
    "pinnedfs_werror%": "false",
    # The published prebuilds (scripts/package/prebuild.mjs): libstdc++ and libgcc linked in, and
    # no glibc symbol version above 2.28. A source build links against the machine it runs on.
    "pinnedfs_portable%": "false",
    # The test hooks (the trips() counter, mkdirs' testAfterPlan steps): built from a source checkout,
    # where the native tests are, and absent from the published package's source builds (it ships
    # no native/test) and from the prebuilds (scripts/package/prebuild.mjs sets this to false).
    "pinnedfs_test_hooks%": "<!(node -p \"require('fs').existsSync('native/test') ? 'true' : 'false'\")"
  },
  "targets": [
    {
      "target_name": "pinnedfs",
      "sources": [
        "<!@(node -p \"require('./native/sources.json').addon.join(' ')\")",
        "<!@(node -p \"require('./native/sources.json').core.join(' ')\")",
        # Every .cc of each coreDirs directory (native/ops), sorted: a new operation needs no list.
        "<!@(node -p \"const fs = require('fs'); require('./native/sources.json').coreDirs.flatMap(d => fs.readdirSync(d).filter(f => f.endsWith('.cc')).sort().map(f => d + '/' + f)).join(' ')\")"
      ],
      "conditions": [
        # Only the command in the branch gyp takes is run: a system with no platform files
        # (native/platform) stops the build here, saying so.
        ["OS!='linux' and OS!='mac'", {
          "sources": ["<!(node -e \"console.error('pinnedfs supports Linux and macOS only: <(OS) has no platform files (native/platform)'); process.exit(1)\")"]
        }],
        ["OS=='linux'", {
          "sources": ["<!@(node -p \"require('./native/sources.json').linux.join(' ')\")"]
        }],
        ["OS=='mac'", {
          "sources": ["<!@(node -p \"require('./native/sources.json').darwin.join(' ')\")"],
          "xcode_settings": {
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "MACOSX_DEPLOYMENT_TARGET": "11.0",
            "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
            "OTHER_CPLUSPLUSFLAGS": ["-Wall", "-Wextra"]
          }
        }],
        ["pinnedfs_test_hooks=='true'", {
          "defines": ["PINNEDFS_TEST_HOOKS"]
        }],
        ["pinnedfs_werror=='true'", {
          "cflags_cc": ["-Werror"],
          "xcode_settings": { "OTHER_CPLUSPLUSFLAGS": ["-Werror"] }
        }],
        ["OS=='linux' and pinnedfs_portable=='true'", {
          "sources": ["<!@(node -p \"require('./native/sources.json').portable.join(' ')\")"],
          "cflags_cc": ["-ffile-prefix-map=<(module_root_dir)/="],
          "ldflags": [
            "-static-libstdc++",
            "-static-libgcc",
            "-Wl,--exclude-libs,ALL",
            "<!@(node -p \"require('./native/sources.json').portableWraps.map(s => '-Wl,--wrap=' + s).join(' ')\")"
          ]
        }]
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "native"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED",
                  "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17", "-std=gnu++20"],
      # Exceptions are compiled in for one purpose: core/alloc.h turns an allocation the system
      # refuses into a typed ENOMEM error instead of an abort. Nothing else throws or catches, and
      # nothing crosses N-API (NAPI_DISABLE_CPP_EXCEPTIONS).
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-fexceptions", "-fvisibility=hidden"]
    },
    {
      # The launcher (native/launcher): what runs in the sandbox between bubblewrap and the command,
      # closing every inherited descriptor. A plain executable beside the addon (the library finds
      # it there: build/Release/ or prebuilds/<platform>/), no N-API in it, no C++ runtime (it
      # uses none): --as-needed keeps libstdc++ out of its dependencies.
      "target_name": "pinnedfs-launch",
      "type": "executable",
      "sources": ["<!@(node -p \"require('./native/sources.json').launcher.join(' ')\")"],
      "include_dirs": ["native"],
      "conditions": [
        ["OS=='linux'", {
          "ldflags": ["-Wl,--as-needed"]
        }],
        ["OS=='mac'", {
          "xcode_settings": {
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "MACOSX_DEPLOYMENT_TARGET": "11.0",
            "GCC_ENABLE_CPP_EXCEPTIONS": "NO",
            "OTHER_CPLUSPLUSFLAGS": ["-Wall", "-Wextra"]
          }
        }],
        ["pinnedfs_werror=='true'", {
          "cflags_cc": ["-Werror"],
          "xcode_settings": { "OTHER_CPLUSPLUSFLAGS": ["-Werror"] }
        }],
        # The published launcher is a static PIE: an executable linked against a glibc of 2.34 or
        # later asks for __libc_start_main@GLIBC_2.34 from its startup code, whatever its own code
        # uses, so no symbol wrapping can bring it to the 2.28 floor; linked statically it asks for
        # nothing (and runs whatever libc the machine has).
        ["OS=='linux' and pinnedfs_portable=='true'", {
          "cflags_cc": ["-ffile-prefix-map=<(module_root_dir)/="],
          "ldflags": ["-static-pie"]
        }]
      ],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17", "-std=gnu++20"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-fno-exceptions", "-fno-rtti"]
    }
  ]
}
