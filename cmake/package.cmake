# What `cmake --install` puts on a node, and the Debian package of it
# (docs/install.md). A CNI plugin lives at a fixed path, so the default prefix
# is / rather than /usr/local: `cmake --install build` installs a node as the
# package does, `cmake --install build --prefix DIR` stages one in DIR.
if(CMAKE_INSTALL_PREFIX_INITIALIZED_TO_DEFAULT)
  set(CMAKE_INSTALL_PREFIX "/" CACHE PATH "Install prefix (/: the paths a node's runtime looks in)" FORCE)
endif()

# cpack and `cmake --install` take what `cmake --build` made; they do not
# build every test suite again first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

install(TARGETS erdma-cni RUNTIME DESTINATION opt/cni/bin)
install(TARGETS erdma-cni-install erdma-cni-nri RUNTIME DESTINATION usr/sbin)
# Every page the binaries' --help and messages name (integration/package/test.sh checks).
install(FILES README.md docs/install.md docs/deploy.md docs/config.md docs/errors.md docs/troubleshooting.md
              docs/security.md docs/reliability.md docs/nri.md
        DESTINATION usr/share/doc/erdma-cni)
file(GLOB ERDMA_DEPLOY_MANIFESTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/deploy/*.yaml)
install(FILES ${ERDMA_DEPLOY_MANIFESTS} DESTINATION usr/share/doc/erdma-cni/examples)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME erdma-cni)
set(CPACK_PACKAGE_VERSION ${ERDMA_CNI_VERSION})  # what --version says (CMakeLists.txt)
set(CPACK_PACKAGE_VENDOR "erdma-cni developers")
set(CPACK_PACKAGE_CONTACT "erdma-cni developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "CNI plugin that gives Kubernetes pods RDMA networking")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "CNI plugin that gives Kubernetes pods RDMA networking\n\
erdma-cni moves an RDMA-capable network device (an eRDMA ENI, a RoCE NIC)\n\
into a pod with its addresses and policy routes, or gives the pod a macvlan\n\
or ipvlan child of it, handles the paired RDMA device, and turns on SMC-R on\n\
a pod annotation. erdma-cni-install puts the plugin into a node's CNI bin dir\n\
and its entry into the node's conflist. erdma-cni-nri, an NRI plugin of the\n\
container runtime, gives the containers of attached pods their locked-memory\n\
limit, their RDMA device nodes and NCCL_IB_HCA.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The debug info stays in the build tree.
set(CPACK_STRIP_FILES ON)
# Dependencies from the binaries themselves (dpkg-shlibdeps): none while the
# plugin and the installer link fully statically, libc6 and libnl for a
# -DERDMA_CNI_STATIC=OFF build. Without dpkg-dev the list is written out, and
# must then follow the binaries by hand.
find_program(DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(FILE_PROGRAM file)
if(DPKG_SHLIBDEPS AND FILE_PROGRAM)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  if(NOT ERDMA_CNI_STATIC OR ERDMA_CNI_SANITIZE)
    set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), libnl-3-200, libnl-route-3-200, libnl-genl-3-200")
  endif()
endif()
include(CPack)
