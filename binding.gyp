{
  "targets": [
    {
      "target_name": "pinnedfs",
      "sources": [
        "<!@(node -p \"require('./native/sources.json').addon.join(' ')\")",
        "<!@(node -p \"require('./native/sources.json').core.join(' ')\")"
      ],
      "conditions": [
        ["OS=='linux'", {
          "sources": ["<!@(node -p \"require('./native/sources.json').linux.join(' ')\")"]
        }],
        ["OS=='mac'", {
          "sources": ["<!@(node -p \"require('./native/sources.json').darwin.join(' ')\")"],
          "xcode_settings": {
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "MACOSX_DEPLOYMENT_TARGET": "11.0",
            "GCC_ENABLE_CPP_EXCEPTIONS": "NO",
            "OTHER_CPLUSPLUSFLAGS": ["-Wall", "-Wextra", "-Werror"]
          }
        }]
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED",
                  "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17", "-std=gnu++20"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-fno-exceptions", "-fvisibility=hidden"]
    }
  ]
}
