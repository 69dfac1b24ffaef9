// SPDX-License-Identifier: Apache-2.0
// Tokens that the provider (tests/oidc/provider.mjs) would never sign,
// made from one it did: the same claims, but
//
//   node forge.mjs otherkey TOKEN   signed by a key made here, with the
//                                   provider's kid (a bad signature)
//   node forge.mjs newkid TOKEN     signed by a key made here, with a kid
//                                   the provider never published
//   node forge.mjs none TOKEN       alg "none", no signature
//   node forge.mjs hs256 TOKEN      HS256 with the provider's kid, the
//                                   secret being the JWKS text of SECRET_FILE
//                                   (the old "HMAC with the public key" trick):
//                                   node forge.mjs hs256 TOKEN SECRET_FILE
//   node forge.mjs alg TOKEN ALG    the header's alg replaced (the signature
//                                   kept): ES256 on an RSA key, say
//   node forge.mjs claims TOKEN JSON  claims merged with JSON, signed by a key
//                                   made here with the provider's kid
//
// It runs from BUILD_DIR/oidc-node (where oidc.sh installs jose); prints
// the token.
import { readFileSync } from 'node:fs';
import { SignJWT, generateKeyPair } from 'jose';

const [mode, token, extra] = process.argv.slice(2);
if (!mode || !token) {
  console.error('usage: forge.mjs otherkey|newkid|none|hs256|alg|claims TOKEN [ARG]');
  process.exit(2);
}
const [h, p, s] = token.split('.');
const header = JSON.parse(Buffer.from(h, 'base64url').toString());
const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');

async function signOther(kid, claims) {
  const { privateKey } = await generateKeyPair('RS256');
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: header.typ, kid }).sign(privateKey);
}

let out;
switch (mode) {
  case 'otherkey': out = await signOther(header.kid, payload); break;
  case 'newkid': out = await signOther('forged-kid', payload); break;
  case 'none': out = `${b64({ alg: 'none', typ: header.typ, kid: header.kid })}.${p}.`; break;
  case 'hs256': {
    const secret = readFileSync(extra);
    out = await new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: header.typ, kid: header.kid })
      .sign(new Uint8Array(secret));
    break;
  }
  case 'alg': out = `${b64({ ...header, alg: extra })}.${p}.${s}`; break;
  case 'claims': out = await signOther(header.kid, { ...payload, ...JSON.parse(extra) }); break;
  default:
    console.error(`forge.mjs: unknown mode ${mode}`);
    process.exit(2);
}
console.log(out);
