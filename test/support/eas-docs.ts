/**
 * The GraphQL examples of EAS's documentation page "GraphQL API" (docs.attest.org, developer tools), verbatim:
 * the suites send them as an EAS application would, changing only the example's UID for one of theirs.
 */

/** "Getting Started": the curl's request body, byte for byte. */
export const EAS_CURL_BODY =
  '{"query":"query Attestations {\\n  attestations(take: 25) {\\n    id\\n    attester\\n    recipient\\n    refUID\\n    revocable\\n    revocationTime\\n    expirationTime\\n    data\\n  }\\n}","variables":{}}';

/** "Get the latest 25 attestations". */
export const EAS_LATEST_25 = `query Attestations {
  attestations(take: 25, orderBy: {time: desc}) {
    id
    attester
    recipient
    refUID
    revocable
    revocationTime
    expirationTime
    data
  }
}`;

/** "Get a specific Attestation by UID", for `uid`. */
export const easAttestationByUid = (uid: string): string => `query Attestation {
  attestation(
    where: { id: "${uid}" }
  ) {
    id
    attester
    recipient
    refUID
    revocable
    revocationTime
    expirationTime
    data
  }
}`;
