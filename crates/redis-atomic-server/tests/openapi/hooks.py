"""schemathesis hooks of contract.py.

* `valid_requests_pass_validation`, a check: `positive_data_acceptance` lets `idempotency_begin`
  answer 422 to a valid request, since the key may already hold another request's fingerprint
  (state, not validation); this keeps that exception exact: the only 422 a valid request may get
  is `fingerprint-mismatch`.
* `filter_case`: schemathesis percent-decodes a generated path parameter before encoding it (to
  keep already-escaped values as they are), so a generated literal `%0D` reaches the server as a
  carriage return: a value the schema allows arrives as one it refuses. Such a case does not
  test the server, and is dropped: a case marked valid is kept only when what the server will
  decode still satisfies the parameter's schema, judged by the document itself.
"""
from urllib.parse import unquote

import jsonschema_rs
import schemathesis

MISMATCH = "urn:redis-atomic:problem:fingerprint-mismatch"


@schemathesis.check
def valid_requests_pass_validation(ctx, response, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    kind = response.json().get("type")
    if kind != MISMATCH or case.operation.definition.raw.get("operationId") != "idempotency_begin":
        raise AssertionError(f"a request the schema allows was refused as {kind}")
    return None


@schemathesis.hook
def filter_case(context, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return True
    components = case.operation.schema.raw_schema.get("components", {})
    for param in case.operation.definition.raw.get("parameters", []):
        value = (case.path_parameters or {}).get(param["name"])
        if param.get("in") != "path" or not isinstance(value, str):
            continue
        schema = {**param["schema"], "components": components}
        if not jsonschema_rs.validator_for(schema).is_valid(unquote(value)):
            return False
    return True
