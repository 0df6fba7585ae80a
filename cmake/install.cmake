# Installing attnscope (cmake --install build --prefix DIR) and packaging it (cpack -G DEB in build/),
# included last from the top CMakeLists.txt. What goes where (GNUInstallDirs):
#   bin/attnscope                                   the executable
#   lib/attnscope/libattnscope_gl.so               the OpenGL compute module (component attnscope)
#   lib/attnscope/libattnscope_cuda.so             the CUDA module (component cuda: not in the .deb)
#   share/attnscope/assets/                         what the app reads at run time (core/util/assets.h)
#   share/applications/, share/metainfo/, share/icons/hicolor/, share/man/man1/,
#   share/bash-completion/completions/              the desktop's files, from packaging/
# The executable finds the modules in <exe dir>/../lib/attnscope (core/backend/select.cpp) and the
# assets in <exe dir>/../share/attnscope/assets, so the tree works under any prefix; the modules'
# folder is lib/attnscope whatever CMAKE_INSTALL_LIBDIR is (a private folder, as /usr/lib/<package>
# is for programs' own libraries).
include(GNUInstallDirs)

set(ATTNSCOPE_APP_ID io.github.attnscope.attnscope)
set(ATTNSCOPE_MODULE_INSTALL_DIR lib/attnscope)
set(ATTNSCOPE_HOMEPAGE "https://github.com/attnscope/attnscope"
    CACHE STRING "The project's homepage, written into the .deb")
set(ATTNSCOPE_PACKAGE_MAINTAINER "attnscope maintainers <attnscope@users.noreply.github.com>"
    CACHE STRING "The .deb's Maintainer field: NAME <EMAIL>")
set(_pkg ${PROJECT_SOURCE_DIR}/packaging)
set(_gen ${PROJECT_BINARY_DIR}/packaging)

if(TARGET attnscope)
  install(TARGETS attnscope RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT attnscope)
endif()
if(TARGET attnscope_gl)
  install(TARGETS attnscope_gl LIBRARY DESTINATION ${ATTNSCOPE_MODULE_INSTALL_DIR}
          COMPONENT attnscope)
endif()
if(TARGET attnscope_cuda)
  # The CUDA module needs libcudart and cuBLAS from NVIDIA's toolkit, which no Debian package of
  # the build machine provides (dpkg-shlibdeps finds no package for them): it is installed by
  # `cmake --install` (component cuda) but left out of the .deb, whose executable then says the
  # CUDA module is not installed and uses the CPU. Where the toolkit's libraries are not in the
  # loader's own folders, the installed copy keeps their folder in its RUNPATH (here
  # /usr/local/cuda's are in ld.so.conf, so neither copy carries one).
  set_target_properties(attnscope_cuda PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS attnscope_cuda LIBRARY DESTINATION ${ATTNSCOPE_MODULE_INSTALL_DIR}
          COMPONENT cuda)
endif()

# Assets: the colour maps are embedded in the executable; everything else is read at run time
# (the lesson's word vectors and presets, the built-in tiny and stories models with their
# provenance and licence files).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/assets/ DESTINATION ${CMAKE_INSTALL_DATADIR}/attnscope/assets
        COMPONENT attnscope PATTERN colormaps EXCLUDE)

# Desktop integration.
configure_file(${_pkg}/${ATTNSCOPE_APP_ID}.metainfo.xml ${_gen}/${ATTNSCOPE_APP_ID}.metainfo.xml
               @ONLY)
configure_file(${_pkg}/attnscope.1 ${_gen}/attnscope.1 @ONLY)
install(FILES ${_pkg}/${ATTNSCOPE_APP_ID}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications
        COMPONENT attnscope)
install(FILES ${_gen}/${ATTNSCOPE_APP_ID}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo
        COMPONENT attnscope)
install(FILES ${_gen}/attnscope.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT attnscope)
install(FILES ${_pkg}/attnscope.bash-completion DESTINATION
        ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME attnscope COMPONENT attnscope)

# The icon: the SVG as drawn (packaging/), and PNGs rendered from it at build time by rsvg-convert
# (librsvg2-bin, in scripts/setup.sh); without rsvg-convert only the SVG is installed.
install(FILES ${_pkg}/${ATTNSCOPE_APP_ID}.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps COMPONENT attnscope)
find_program(ATTNSCOPE_RSVG_CONVERT rsvg-convert)
if(ATTNSCOPE_RSVG_CONVERT)
  set(_icon_pngs "")
  foreach(size 16 22 24 32 48 64 128 256 512)
    set(_png ${_gen}/icons/${size}x${size}/${ATTNSCOPE_APP_ID}.png)
    add_custom_command(
      OUTPUT ${_png}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${_gen}/icons/${size}x${size}
      COMMAND ${ATTNSCOPE_RSVG_CONVERT} -w ${size} -h ${size} -o ${_png}
              ${_pkg}/${ATTNSCOPE_APP_ID}.svg
      DEPENDS ${_pkg}/${ATTNSCOPE_APP_ID}.svg
      COMMENT "Rendering the ${size}x${size} icon"
      VERBATIM)
    list(APPEND _icon_pngs ${_png})
    install(FILES ${_png} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps
            COMPONENT attnscope)
  endforeach()
  add_custom_target(attnscope_icons ALL DEPENDS ${_icon_pngs})
else()
  message(STATUS "attnscope: rsvg-convert not found, only the SVG icon is installed")
endif()

# The Debian package: cpack -G DEB in build/ writes attnscope_<version>_<arch>.deb with the
# component attnscope (everything above but the CUDA module). Its dependencies are computed by
# dpkg-shlibdeps (dpkg-dev) from the executable and the OpenGL module, plus the fonts it draws with.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME attnscope)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "attnscope")
set(CPACK_PACKAGE_CONTACT "${ATTNSCOPE_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "see how attention in transformers works, live")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL attnscope)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${ATTNSCOPE_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${ATTNSCOPE_HOMEPAGE}")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "fonts-dejavu-core")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "fonts-noto-core, fonts-noto-cjk, fonts-noto-color-emoji, libgl1-mesa-dri, bash-completion")
# (CPack puts the summary above as the description's first line.)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "attnscope is a desktop application that shows how attention in transformers
works: type a sentence and watch the attention weights as heatmaps, lines and
arcs, and follow softmax(QK^T/sqrt(d_k))V step by step with a head's numbers,
on a built-in lesson model or on real models read from Hugging Face files
(GPT-2, BERT-style encoders, Llama, Mistral, Qwen, Gemma, BART, Marian, T5).
Its command line exports traces and renders figures (SVG, PDF, PNG).")
include(CPack)
