// Minimal config for the local chain the stack starts with `hardhat node --config devnode/hardhat.config.cjs`.
// No Solidity sources are compiled: the InputBox runtime bytecode is placed with hardhat_setCode.
module.exports = {
  paths: {
    // Keep hardhat's own cache and artifacts out of the project tree.
    cache: require("node:path").join(require("node:os").tmpdir(), "devnode-hardhat-cache"),
    artifacts: require("node:path").join(require("node:os").tmpdir(), "devnode-hardhat-artifacts"),
  },
  networks: {
    hardhat: {
      chainId: 31337,
      // Mine each transaction at once so an input is visible to the devnode right after it is sent.
      mining: { auto: true, interval: 0 },
      // Without this every block takes at least the previous block's time + 1 s, so a burst of quick inputs
      // pushes block time ahead of the wall clock (and grants expiring "in a few seconds" read as expired).
      // Blocks mined in the same second share its timestamp instead (DECISIONS.md section 12).
      allowBlocksWithSameTimestamp: true,
      // Every request and transaction in the chain's log (DATA_DIR/logs/chain.log under npm start). The test
      // suites' stacks turn it off (CHAIN_LOGGING=off): formatting each call was a fifth of the chain's CPU per
      // input, and no suite reads it.
      loggingEnabled: process.env.CHAIN_LOGGING !== "off",
      // Hardhat's 20 accounts and 10 more: #20 upward are the members of a Quorum (npm start -- --quorum N).
      // The development mnemonic's first 30 keys as a table (devnode/hardhat-keys.json, checked against the
      // mnemonic by test/devnode/hardhat-keys.test.ts), each with hardhat's usual 10,000 ETH: from the mnemonic
      // itself, the chain spent 0.6 s of CPU at every start on BIP-39's PBKDF2 in JavaScript (issue 51).
      accounts: require("./hardhat-keys.json").map((privateKey) => ({ privateKey, balance: "10000000000000000000000" })),
    },
  },
};
