// The translation unit that builds the precompiled header every other target reuses (cmake/pch.cmake).
