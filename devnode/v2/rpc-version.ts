/** What the v2 devnode answers `cartesi_getNodeVersion` and `cartesi_getNodeInfo` with. */
export const DEVNODE_V2_VERSION = "2.0.0-devnode";
