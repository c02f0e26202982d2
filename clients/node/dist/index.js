var __defProp = Object.defineProperty;
var __export = (target, all) => {
  for (var name in all)
    __defProp(target, name, { get: all[name], enumerable: true });
};

// src/client.ts
import * as net3 from "node:net";
import { randomBytes as randomBytes2 } from "node:crypto";

// node_modules/@connectrpc/connect/dist/esm/code.js
var Code;
(function(Code2) {
  Code2[Code2["Canceled"] = 1] = "Canceled";
  Code2[Code2["Unknown"] = 2] = "Unknown";
  Code2[Code2["InvalidArgument"] = 3] = "InvalidArgument";
  Code2[Code2["DeadlineExceeded"] = 4] = "DeadlineExceeded";
  Code2[Code2["NotFound"] = 5] = "NotFound";
  Code2[Code2["AlreadyExists"] = 6] = "AlreadyExists";
  Code2[Code2["PermissionDenied"] = 7] = "PermissionDenied";
  Code2[Code2["ResourceExhausted"] = 8] = "ResourceExhausted";
  Code2[Code2["FailedPrecondition"] = 9] = "FailedPrecondition";
  Code2[Code2["Aborted"] = 10] = "Aborted";
  Code2[Code2["OutOfRange"] = 11] = "OutOfRange";
  Code2[Code2["Unimplemented"] = 12] = "Unimplemented";
  Code2[Code2["Internal"] = 13] = "Internal";
  Code2[Code2["Unavailable"] = 14] = "Unavailable";
  Code2[Code2["DataLoss"] = 15] = "DataLoss";
  Code2[Code2["Unauthenticated"] = 16] = "Unauthenticated";
})(Code || (Code = {}));

// node_modules/@bufbuild/protobuf/dist/esm/is-message.js
function isMessage(arg, schema) {
  const isMessage2 = arg !== null && typeof arg == "object" && "$typeName" in arg && typeof arg.$typeName == "string";
  if (!isMessage2) {
    return false;
  }
  if (schema === void 0) {
    return true;
  }
  return schema.typeName === arg.$typeName;
}

// node_modules/@bufbuild/protobuf/dist/esm/descriptors.js
var ScalarType;
(function(ScalarType2) {
  ScalarType2[ScalarType2["DOUBLE"] = 1] = "DOUBLE";
  ScalarType2[ScalarType2["FLOAT"] = 2] = "FLOAT";
  ScalarType2[ScalarType2["INT64"] = 3] = "INT64";
  ScalarType2[ScalarType2["UINT64"] = 4] = "UINT64";
  ScalarType2[ScalarType2["INT32"] = 5] = "INT32";
  ScalarType2[ScalarType2["FIXED64"] = 6] = "FIXED64";
  ScalarType2[ScalarType2["FIXED32"] = 7] = "FIXED32";
  ScalarType2[ScalarType2["BOOL"] = 8] = "BOOL";
  ScalarType2[ScalarType2["STRING"] = 9] = "STRING";
  ScalarType2[ScalarType2["BYTES"] = 12] = "BYTES";
  ScalarType2[ScalarType2["UINT32"] = 13] = "UINT32";
  ScalarType2[ScalarType2["SFIXED32"] = 15] = "SFIXED32";
  ScalarType2[ScalarType2["SFIXED64"] = 16] = "SFIXED64";
  ScalarType2[ScalarType2["SINT32"] = 17] = "SINT32";
  ScalarType2[ScalarType2["SINT64"] = 18] = "SINT64";
})(ScalarType || (ScalarType = {}));

// node_modules/@bufbuild/protobuf/dist/esm/wire/varint.js
function varint64read() {
  const buf = this.buf;
  let pos = this.pos;
  let lo = 0;
  let hi = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    const b = buf[pos++];
    lo |= (b & 127) << shift;
    if ((b & 128) == 0) {
      this.pos = pos;
      this.assertBounds();
      this.varint64Lo = lo;
      this.varint64Hi = hi;
      return;
    }
  }
  const middleByte = buf[pos++];
  lo |= (middleByte & 15) << 28;
  hi = (middleByte & 112) >> 4;
  if ((middleByte & 128) == 0) {
    this.pos = pos;
    this.assertBounds();
    this.varint64Lo = lo;
    this.varint64Hi = hi;
    return;
  }
  for (let shift = 3; shift <= 31; shift += 7) {
    const b = buf[pos++];
    hi |= (b & 127) << shift;
    if ((b & 128) == 0) {
      this.pos = pos;
      this.assertBounds();
      this.varint64Lo = lo;
      this.varint64Hi = hi;
      return;
    }
  }
  throw new Error("invalid varint");
}
var TWO_PWR_32_DBL = 4294967296;
function int64FromString(dec) {
  const minus = dec[0] === "-";
  if (minus) {
    dec = dec.slice(1);
  }
  const base = 1e6;
  let lowBits = 0;
  let highBits = 0;
  function add1e6digit(begin, end) {
    const digit1e6 = Number(dec.slice(begin, end));
    highBits *= base;
    lowBits = lowBits * base + digit1e6;
    if (lowBits >= TWO_PWR_32_DBL) {
      highBits = highBits + (lowBits / TWO_PWR_32_DBL | 0);
      lowBits = lowBits % TWO_PWR_32_DBL;
    }
  }
  add1e6digit(-24, -18);
  add1e6digit(-18, -12);
  add1e6digit(-12, -6);
  add1e6digit(-6);
  return minus ? negate(lowBits, highBits) : newBits(lowBits, highBits);
}
function int64ToString(lo, hi) {
  let bits = newBits(lo, hi);
  const negative = bits.hi & 2147483648;
  if (negative) {
    bits = negate(bits.lo, bits.hi);
  }
  const result = uInt64ToString(bits.lo, bits.hi);
  return negative ? "-" + result : result;
}
function uInt64ToString(lo, hi) {
  ({ lo, hi } = toUnsigned(lo, hi));
  if (hi <= 2097151) {
    return String(TWO_PWR_32_DBL * hi + lo);
  }
  const low = lo & 16777215;
  const mid = (lo >>> 24 | hi << 8) & 16777215;
  const high = hi >> 16 & 65535;
  let digitA = low + mid * 6777216 + high * 6710656;
  let digitB = mid + high * 8147497;
  let digitC = high * 2;
  const base = 1e7;
  if (digitA >= base) {
    digitB += Math.floor(digitA / base);
    digitA %= base;
  }
  if (digitB >= base) {
    digitC += Math.floor(digitB / base);
    digitB %= base;
  }
  return digitC.toString() + decimalFrom1e7WithLeadingZeros(digitB) + decimalFrom1e7WithLeadingZeros(digitA);
}
function toUnsigned(lo, hi) {
  return { lo: lo >>> 0, hi: hi >>> 0 };
}
function newBits(lo, hi) {
  return { lo: lo | 0, hi: hi | 0 };
}
function negate(lowBits, highBits) {
  highBits = ~highBits;
  if (lowBits) {
    lowBits = ~lowBits + 1;
  } else {
    highBits += 1;
  }
  return newBits(lowBits, highBits);
}
var decimalFrom1e7WithLeadingZeros = (digit1e7) => {
  const partial = String(digit1e7);
  return "0000000".slice(partial.length) + partial;
};
function varint32write(value, bytes) {
  if (value >>> 0 < 128) {
    bytes.push(value);
    return;
  }
  if (value >= 0) {
    while (value > 127) {
      bytes.push(value & 127 | 128);
      value = value >>> 7;
    }
    bytes.push(value);
  } else {
    for (let i = 0; i < 9; i++) {
      bytes.push(value & 127 | 128);
      value = value >> 7;
    }
    bytes.push(1);
  }
}
function varint32read() {
  let b = this.buf[this.pos++];
  if ((b & 128) === 0) {
    this.assertBounds();
    return b;
  }
  let result = b & 127;
  b = this.buf[this.pos++];
  result |= (b & 127) << 7;
  if ((b & 128) === 0) {
    this.assertBounds();
    return result;
  }
  b = this.buf[this.pos++];
  result |= (b & 127) << 14;
  if ((b & 128) === 0) {
    this.assertBounds();
    return result;
  }
  b = this.buf[this.pos++];
  result |= (b & 127) << 21;
  if ((b & 128) === 0) {
    this.assertBounds();
    return result;
  }
  b = this.buf[this.pos++];
  result |= (b & 15) << 28;
  for (let readBytes = 5; (b & 128) !== 0 && readBytes < 10; readBytes++)
    b = this.buf[this.pos++];
  if ((b & 128) !== 0)
    throw new Error("invalid varint");
  this.assertBounds();
  return result >>> 0;
}

// node_modules/@bufbuild/protobuf/dist/esm/proto-int64.js
var protoInt64 = /* @__PURE__ */ makeInt64Support();
function makeInt64Support() {
  const dv = new DataView(new ArrayBuffer(8));
  const ok = typeof BigInt === "function" && typeof dv.getBigInt64 === "function" && typeof dv.getBigUint64 === "function" && typeof dv.setBigInt64 === "function" && typeof dv.setBigUint64 === "function" && (!!globalThis.Deno || !!globalThis.Bun || typeof process != "object" || typeof process.env != "object" || process.env.BUF_BIGINT_DISABLE !== "1");
  if (ok) {
    const MIN = BigInt("-9223372036854775808");
    const MAX = BigInt("9223372036854775807");
    const UMIN = BigInt("0");
    const UMAX = BigInt("18446744073709551615");
    return {
      zero: BigInt(0),
      supported: true,
      parse(value) {
        const bi = typeof value == "bigint" ? value : BigInt(value);
        if (bi > MAX || bi < MIN) {
          throw new Error(`invalid int64: ${value}`);
        }
        return bi;
      },
      uParse(value) {
        const bi = typeof value == "bigint" ? value : BigInt(value);
        if (bi > UMAX || bi < UMIN) {
          throw new Error(`invalid uint64: ${value}`);
        }
        return bi;
      },
      enc(value) {
        dv.setBigInt64(0, this.parse(value), true);
        return {
          lo: dv.getInt32(0, true),
          hi: dv.getInt32(4, true)
        };
      },
      uEnc(value) {
        dv.setBigInt64(0, this.uParse(value), true);
        return {
          lo: dv.getInt32(0, true),
          hi: dv.getInt32(4, true)
        };
      },
      dec(lo, hi) {
        dv.setInt32(0, lo, true);
        dv.setInt32(4, hi, true);
        return dv.getBigInt64(0, true);
      },
      uDec(lo, hi) {
        dv.setInt32(0, lo, true);
        dv.setInt32(4, hi, true);
        return dv.getBigUint64(0, true);
      }
    };
  }
  return {
    zero: "0",
    supported: false,
    parse(value) {
      if (typeof value != "string") {
        value = value.toString();
      }
      assertInt64String(value);
      return value;
    },
    uParse(value) {
      if (typeof value != "string") {
        value = value.toString();
      }
      assertUInt64String(value);
      return value;
    },
    enc(value) {
      if (typeof value != "string") {
        value = value.toString();
      }
      assertInt64String(value);
      return int64FromString(value);
    },
    uEnc(value) {
      if (typeof value != "string") {
        value = value.toString();
      }
      assertUInt64String(value);
      return int64FromString(value);
    },
    dec(lo, hi) {
      return int64ToString(lo, hi);
    },
    uDec(lo, hi) {
      return uInt64ToString(lo, hi);
    }
  };
}
function assertInt64String(value) {
  if (!/^-?[0-9]+$/.test(value)) {
    throw new Error("invalid int64: " + value);
  }
}
function assertUInt64String(value) {
  if (!/^[0-9]+$/.test(value)) {
    throw new Error("invalid uint64: " + value);
  }
}

// node_modules/@bufbuild/protobuf/dist/esm/reflect/scalar.js
function scalarZeroValue(type, longAsString) {
  switch (type) {
    case ScalarType.STRING:
      return "";
    case ScalarType.BOOL:
      return false;
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return 0;
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SFIXED64:
    case ScalarType.FIXED64:
    case ScalarType.SINT64:
      return longAsString ? "0" : protoInt64.zero;
    case ScalarType.BYTES:
      return new Uint8Array(0);
    default:
      return 0;
  }
}
function isScalarZeroValue(type, value) {
  switch (type) {
    case ScalarType.BOOL:
      return value === false;
    case ScalarType.STRING:
      return value === "";
    case ScalarType.BYTES:
      return value instanceof Uint8Array && !value.byteLength;
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return Object.is(value, 0);
    default:
      return value == 0;
  }
}

// node_modules/@bufbuild/protobuf/dist/esm/reflect/unsafe.js
var IMPLICIT = 2;
var unsafeLocal = /* @__PURE__ */ Symbol.for("reflect unsafe local");
function unsafeOneofCase(target, oneof) {
  const c = target[oneof.localName].case;
  if (c === void 0) {
    return c;
  }
  return oneof.fields.find((f) => f.localName === c);
}
function unsafeIsSet(target, field) {
  const name = field.localName;
  if (field.oneof) {
    return target[field.oneof.localName].case === name;
  }
  if (field.presence != IMPLICIT) {
    return target[name] !== void 0 && Object.prototype.hasOwnProperty.call(target, name);
  }
  switch (field.fieldKind) {
    case "list":
      return target[name].length > 0;
    case "map":
      return Object.keys(target[name]).length > 0;
    case "scalar":
      return !isScalarZeroValue(field.scalar, target[name]);
    case "enum":
      return target[name] !== field.enum.values[0].number;
  }
  throw new Error("message field with implicit presence");
}
function unsafeIsSetExplicit(target, localName) {
  return Object.prototype.hasOwnProperty.call(target, localName) && target[localName] !== void 0;
}
function unsafeGet(target, field) {
  if (field.oneof) {
    const oneof = target[field.oneof.localName];
    if (oneof.case === field.localName) {
      return oneof.value;
    }
    return void 0;
  }
  return target[field.localName];
}
function unsafeSet(target, field, value) {
  if (field.oneof) {
    target[field.oneof.localName] = {
      case: field.localName,
      value
    };
  } else {
    target[field.localName] = value;
  }
}
function setOwn(obj, key, value) {
  if (key === "__proto__") {
    Object.defineProperty(obj, "__proto__", {
      value,
      writable: true,
      enumerable: true,
      configurable: true
    });
  } else {
    obj[key] = value;
  }
}
function getOwn(obj, key) {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : void 0;
}
function unsafeClear(target, field) {
  const name = field.localName;
  if (field.oneof) {
    const oneofLocalName = field.oneof.localName;
    if (target[oneofLocalName].case === name) {
      target[oneofLocalName] = { case: void 0 };
    }
  } else if (field.presence != IMPLICIT) {
    delete target[name];
  } else {
    switch (field.fieldKind) {
      case "map":
        target[name] = {};
        break;
      case "list":
        target[name] = [];
        break;
      case "enum":
        target[name] = field.enum.values[0].number;
        break;
      case "scalar":
        target[name] = scalarZeroValue(field.scalar, field.longAsString);
        break;
    }
  }
}

// node_modules/@bufbuild/protobuf/dist/esm/reflect/guard.js
function isObject(arg) {
  return arg !== null && typeof arg == "object" && !Array.isArray(arg);
}
function isReflectList(arg, field) {
  var _a, _b, _c, _d;
  if (isObject(arg) && unsafeLocal in arg && "add" in arg && "field" in arg && typeof arg.field == "function") {
    if (field !== void 0) {
      const a = field;
      const b = arg.field();
      return a.listKind == b.listKind && a.scalar === b.scalar && ((_a = a.message) === null || _a === void 0 ? void 0 : _a.typeName) === ((_b = b.message) === null || _b === void 0 ? void 0 : _b.typeName) && ((_c = a.enum) === null || _c === void 0 ? void 0 : _c.typeName) === ((_d = b.enum) === null || _d === void 0 ? void 0 : _d.typeName);
    }
    return true;
  }
  return false;
}
function isReflectMap(arg, field) {
  var _a, _b, _c, _d;
  if (isObject(arg) && unsafeLocal in arg && "has" in arg && "field" in arg && typeof arg.field == "function") {
    if (field !== void 0) {
      const a = field, b = arg.field();
      return a.mapKey === b.mapKey && a.mapKind == b.mapKind && a.scalar === b.scalar && ((_a = a.message) === null || _a === void 0 ? void 0 : _a.typeName) === ((_b = b.message) === null || _b === void 0 ? void 0 : _b.typeName) && ((_c = a.enum) === null || _c === void 0 ? void 0 : _c.typeName) === ((_d = b.enum) === null || _d === void 0 ? void 0 : _d.typeName);
    }
    return true;
  }
  return false;
}
function isReflectMessage(arg, messageDesc2) {
  return isObject(arg) && unsafeLocal in arg && "desc" in arg && isObject(arg.desc) && arg.desc.kind === "message" && (messageDesc2 === void 0 || arg.desc.typeName == messageDesc2.typeName);
}

// node_modules/@bufbuild/protobuf/dist/esm/wkt/wrappers.js
function isWrapper(arg) {
  return isWrapperTypeName(arg.$typeName);
}
function isWrapperDesc(messageDesc2) {
  const f = messageDesc2.fields[0];
  return isWrapperTypeName(messageDesc2.typeName) && f !== void 0 && f.fieldKind == "scalar" && f.name == "value" && f.number == 1;
}
function hasCustomJsonRepresentation(desc) {
  switch (desc.typeName) {
    case "google.protobuf.Any":
    case "google.protobuf.Timestamp":
    case "google.protobuf.Duration":
    case "google.protobuf.FieldMask":
    case "google.protobuf.Struct":
    case "google.protobuf.Value":
    case "google.protobuf.ListValue":
      return true;
    default:
      return isWrapperDesc(desc);
  }
}
var wrapperTypeNames = /* @__PURE__ */ new Set([
  "google.protobuf.DoubleValue",
  "google.protobuf.FloatValue",
  "google.protobuf.Int64Value",
  "google.protobuf.UInt64Value",
  "google.protobuf.Int32Value",
  "google.protobuf.UInt32Value",
  "google.protobuf.BoolValue",
  "google.protobuf.StringValue",
  "google.protobuf.BytesValue"
]);
function isWrapperTypeName(name) {
  return wrapperTypeNames.has(name);
}

// node_modules/@bufbuild/protobuf/dist/esm/create.js
var EDITION_PROTO3 = 999;
var EDITION_PROTO2 = 998;
var IMPLICIT2 = 2;
function create(schema, init) {
  if (isMessage(init, schema)) {
    return init;
  }
  return compiledCreate(schema)(init);
}
var compiledCreates = /* @__PURE__ */ new WeakMap();
function compiledCreate(desc) {
  let compiled = compiledCreates.get(desc);
  if (compiled === void 0) {
    compiled = compileCreate(desc);
    compiledCreates.set(desc, compiled);
  }
  return compiled;
}
var INIT_SINGULAR = 0;
var INIT_LIST = 1;
var INIT_MAP = 2;
var INIT_ONEOF = 3;
function compileCreate(desc) {
  const typeName = desc.typeName;
  const { properties, prototype } = compileInitMessage(desc);
  return (init) => {
    let message2;
    if (prototype !== void 0) {
      message2 = Object.create(prototype);
      message2.$typeName = typeName;
    } else {
      message2 = { $typeName: typeName };
    }
    for (let i = 0; i < properties.length; i++) {
      const property = properties[i];
      const name = property.name;
      const initValue = init === null || init === void 0 ? void 0 : init[name];
      switch (property.kind) {
        case INIT_SINGULAR:
          if (initValue != null) {
            message2[name] = property.convert !== void 0 ? property.convert(initValue) : initValue;
          } else if (property.constant !== void 0) {
            message2[name] = property.constant;
          }
          break;
        case INIT_LIST:
          message2[name] = property.convert !== void 0 && Array.isArray(initValue) ? initValue.map(property.convert) : initValue !== null && initValue !== void 0 ? initValue : [];
          break;
        case INIT_MAP:
          if (property.convert === void 0 || !isObject(initValue)) {
            message2[name] = initValue !== null && initValue !== void 0 ? initValue : {};
          } else {
            const converted = {};
            const keys = Object.keys(initValue);
            for (let k = 0; k < keys.length; k++) {
              setOwn(converted, keys[k], property.convert(initValue[keys[k]]));
            }
            message2[name] = converted;
          }
          break;
        case INIT_ONEOF: {
          const oneofValue = initValue;
          if ((oneofValue === null || oneofValue === void 0 ? void 0 : oneofValue.case) != null) {
            const convert = property.convert.get(oneofValue.case);
            if (convert !== void 0) {
              message2[name] = {
                case: oneofValue.case,
                value: convert(oneofValue.value)
              };
              break;
            }
          }
          message2[name] = { case: void 0 };
          break;
        }
      }
    }
    return message2;
  };
}
function compileInitMessage(desc) {
  var _a, _b;
  const properties = [];
  const prototype = {};
  const usePrototype = needsPrototypeChain(desc);
  for (const member of desc.members) {
    const name = member.localName;
    if (member.kind == "oneof") {
      properties.push({
        name,
        kind: INIT_ONEOF,
        constant: void 0,
        convert: compileConvertOneof(member)
      });
      continue;
    }
    switch (member.fieldKind) {
      case "message": {
        properties.push({
          name,
          kind: INIT_SINGULAR,
          constant: void 0,
          convert: compileConvertMessage(member)
        });
        break;
      }
      case "list": {
        properties.push({
          name,
          kind: INIT_LIST,
          constant: void 0,
          convert: member.listKind == "message" ? (_a = compileConvertMessage(member)) !== null && _a !== void 0 ? _a : ((value) => value) : member.scalar == ScalarType.BYTES ? toU8Arr : void 0
        });
        break;
      }
      case "map": {
        properties.push({
          name,
          kind: INIT_MAP,
          constant: void 0,
          convert: member.mapKind == "message" ? (_b = compileConvertMessage(member)) !== null && _b !== void 0 ? _b : ((value) => value) : member.scalar == ScalarType.BYTES ? toU8Arr : void 0
        });
        break;
      }
      default: {
        const zeroValue = createZeroValue(member);
        properties.push({
          name,
          kind: INIT_SINGULAR,
          constant: member.presence == IMPLICIT2 ? zeroValue : void 0,
          convert: member.fieldKind == "scalar" && member.scalar == ScalarType.BYTES ? toU8Arr : void 0
        });
        if (usePrototype) {
          prototype[name] = zeroValue;
        }
        break;
      }
    }
  }
  return {
    properties,
    prototype: usePrototype ? prototype : void 0
  };
}
function compileConvertOneof(oneof) {
  const converters = /* @__PURE__ */ new Map();
  for (const field of oneof.fields) {
    let convert;
    if (field.fieldKind == "message") {
      convert = compileConvertMessage(field);
    } else if (field.fieldKind == "scalar" && field.scalar == ScalarType.BYTES) {
      convert = toU8Arr;
    }
    converters.set(field.localName, convert !== null && convert !== void 0 ? convert : ((value) => value));
  }
  return converters;
}
function compileConvertMessage(field) {
  if (field.fieldKind == "message" && !field.oneof && isWrapperDesc(field.message)) {
    return field.message.fields[0].scalar == ScalarType.BYTES ? toU8Arr : void 0;
  }
  if (field.message.typeName == "google.protobuf.Struct" && field.parent.typeName !== "google.protobuf.Value") {
    return void 0;
  }
  const messageDesc2 = field.message;
  let compiled;
  return (value) => {
    if (!isObject(value) || isMessage(value, messageDesc2)) {
      return value;
    }
    compiled !== null && compiled !== void 0 ? compiled : compiled = compiledCreate(messageDesc2);
    return compiled(value);
  };
}
function toU8Arr(value) {
  return Array.isArray(value) ? new Uint8Array(value) : value;
}
function needsPrototypeChain(desc) {
  switch (desc.file.edition) {
    case EDITION_PROTO3:
      return false;
    case EDITION_PROTO2:
      return true;
    default:
      return desc.fields.some((f) => f.presence != IMPLICIT2 && f.fieldKind != "message" && !f.oneof);
  }
}
function createZeroValue(field) {
  const defaultValue = field.getDefaultValue();
  if (defaultValue !== void 0) {
    return field.fieldKind == "scalar" && field.longAsString ? defaultValue.toString() : defaultValue;
  }
  return field.fieldKind == "scalar" ? scalarZeroValue(field.scalar, field.longAsString) : field.enum.values[0].number;
}

// node_modules/@bufbuild/protobuf/dist/esm/reflect/error.js
var errorNames = [
  "FieldValueInvalidError",
  "FieldListRangeError",
  "ForeignFieldError"
];
var FieldError = class extends Error {
  constructor(fieldOrOneof, message2, name = "FieldValueInvalidError") {
    super(message2);
    this.name = name;
    this.field = () => fieldOrOneof;
  }
};
function isFieldError(arg) {
  return arg instanceof Error && errorNames.includes(arg.name) && "field" in arg && typeof arg.field == "function";
}

// node_modules/@bufbuild/protobuf/dist/esm/wire/text-encoding.js
var te;
function configureTextEncoding(textEncoding) {
  var _a;
  te = Object.assign(Object.assign({}, textEncoding), { encodeUtf8Into: (_a = textEncoding.encodeUtf8Into) !== null && _a !== void 0 ? _a : emulateEncodeInto(textEncoding.encodeUtf8.bind(textEncoding)) });
}
function getTextEncoding() {
  if (!te) {
    const globals = globalThis;
    if (!globals.TextEncoder || !globals.TextDecoder) {
      throw new Error("encoding API missing: install TextEncoder and TextDecoder on globalThis");
    }
    const textEncoder = new globals.TextEncoder();
    const textDecoder = new globals.TextDecoder("utf-8", {
      ignoreBOM: true
    });
    let textDecoderStrict;
    const config = {
      encodeUtf8(text) {
        return textEncoder.encode(text);
      },
      decodeUtf8(bytes, strict) {
        if (strict) {
          if (!textDecoderStrict) {
            textDecoderStrict = new globals.TextDecoder("utf-8", {
              fatal: true,
              ignoreBOM: true
            });
          }
          return textDecoderStrict.decode(bytes);
        }
        return textDecoder.decode(bytes);
      },
      checkUtf8(text) {
        try {
          encodeURIComponent(text);
          return true;
        } catch (_) {
          return false;
        }
      }
    };
    if (textEncoder.encodeInto) {
      config.encodeUtf8Into = textEncoder.encodeInto.bind(textEncoder);
    }
    const nativeStringIsWellFormed = String.prototype.isWellFormed;
    if (nativeStringIsWellFormed) {
      config.checkUtf8 = (text) => {
        return nativeStringIsWellFormed.call(text);
      };
    }
    configureTextEncoding(config);
  }
  return te;
}
function emulateEncodeInto(encodeUtf8) {
  return (text, dest) => {
    const bytes = encodeUtf8(text);
    dest.set(bytes);
    return { written: bytes.byteLength };
  };
}

// node_modules/@bufbuild/protobuf/dist/esm/wire/binary-encoding.js
var WireType;
(function(WireType2) {
  WireType2[WireType2["Varint"] = 0] = "Varint";
  WireType2[WireType2["Bit64"] = 1] = "Bit64";
  WireType2[WireType2["LengthDelimited"] = 2] = "LengthDelimited";
  WireType2[WireType2["StartGroup"] = 3] = "StartGroup";
  WireType2[WireType2["EndGroup"] = 4] = "EndGroup";
  WireType2[WireType2["Bit32"] = 5] = "Bit32";
})(WireType || (WireType = {}));
var UINT32_MAX = 4294967295;
var INT32_MAX = 2147483647;
var INT32_MIN = -2147483648;
var BinaryWriter = class {
  constructor(encodeUtf8) {
    this.stackPos = [];
    this.encodeUtf8Into = encodeUtf8 ? emulateEncodeInto(encodeUtf8) : getTextEncoding().encodeUtf8Into;
    this.buffer = EMPTY_BUFFER;
    this.viewCache = EMPTY_VIEW;
    this.pos = 0;
  }
  ensureCapacity(size) {
    const required = this.pos + size;
    if (required > this.buffer.length) {
      let newLen = this.buffer.length || INITIAL_SIZE;
      while (newLen < required)
        newLen *= 2;
      const newBuf = new Uint8Array(newLen);
      if (this.pos > 0)
        newBuf.set(this.buffer);
      this.buffer = newBuf;
    }
  }
  /**
   * The DataView over `buffer`, rebuilt only if the buffer has grown since it
   * was last used.
   */
  view() {
    const bytes = this.buffer;
    const view = this.viewCache;
    if (view.byteLength === bytes.byteLength)
      return view;
    const newView = new DataView(bytes.buffer);
    this.viewCache = newView;
    return newView;
  }
  /**
   * Return all bytes written and reset this writer.
   */
  finish() {
    const result = this.buffer.slice(0, this.pos);
    this.pos = 0;
    this.stackPos = [];
    return result;
  }
  /**
   * Start a new fork for length-delimited data like a message
   * or a packed repeated field.
   *
   * Must be joined later with `join()`.
   */
  fork() {
    this.stackPos.push(this.pos);
    this.ensureCapacity(DEFAULT_LEN_PREFIX_SIZE);
    this.buffer[this.pos++] = 0;
    return this;
  }
  /**
   * Join the last fork. Write its length and bytes, then
   * return to the previous state.
   */
  join() {
    const forkPos = this.stackPos.pop();
    if (forkPos === void 0)
      throw new Error("invalid state, fork stack empty");
    const len = this.pos - forkPos - DEFAULT_LEN_PREFIX_SIZE;
    const lenPrefixSize = varint32Size(len);
    if (lenPrefixSize > DEFAULT_LEN_PREFIX_SIZE) {
      this.ensureCapacity(lenPrefixSize - DEFAULT_LEN_PREFIX_SIZE);
      this.buffer.copyWithin(forkPos + lenPrefixSize, forkPos + DEFAULT_LEN_PREFIX_SIZE, this.pos);
    }
    this.pos = forkPos;
    this.uint32(len);
    this.pos += len;
    return this;
  }
  /**
   * Writes a tag (field number and wire type).
   *
   * Equivalent to `uint32( (fieldNo << 3 | type) >>> 0 )`.
   *
   * Generated code should compute the tag ahead of time and call `uint32()`.
   */
  tag(fieldNo, type) {
    return this.uint32((fieldNo << 3 | type) >>> 0);
  }
  /**
   * Write a chunk of raw bytes.
   */
  raw(chunk) {
    this.ensureCapacity(chunk.length);
    this.buffer.set(chunk, this.pos);
    this.pos += chunk.length;
    return this;
  }
  /**
   * Write a `uint32` value, an unsigned 32 bit varint.
   */
  uint32(value) {
    assertUInt32(value);
    this.ensureCapacity(5);
    if (value < 128) {
      this.buffer[this.pos++] = value;
      return this;
    }
    while (value > 127) {
      this.buffer[this.pos++] = value & 127 | 128;
      value >>>= 7;
    }
    this.buffer[this.pos++] = value;
    return this;
  }
  /**
   * Write a `int32` value, a signed 32 bit varint.
   */
  int32(value) {
    assertInt32(value);
    if (value >= 0) {
      return this.uint32(value);
    }
    this.ensureCapacity(10);
    for (let i = 0; i < 9; i++) {
      this.buffer[this.pos++] = value & 127 | 128;
      value >>= 7;
    }
    this.buffer[this.pos++] = 1;
    return this;
  }
  /**
   * Write a `bool` value, a varint.
   */
  bool(value) {
    this.ensureCapacity(1);
    this.buffer[this.pos++] = value ? 1 : 0;
    return this;
  }
  /**
   * Write a `bytes` value, length-delimited arbitrary data.
   */
  bytes(value) {
    this.uint32(value.byteLength);
    return this.raw(value);
  }
  /**
   * Write a `string` value, length-delimited data converted to UTF-8 text.
   */
  string(value) {
    if (typeof value !== "string") {
      value = String(value);
    }
    const len = value.length;
    if (len <= ASCII_MAX_LENGTH) {
      this.ensureCapacity(len + 1);
      const ascii = this.buffer;
      let pos = this.pos;
      ascii[pos++] = len;
      let i = 0;
      for (; i < len; i++) {
        const code = value.charCodeAt(i);
        if (code > 127)
          break;
        ascii[pos++] = code;
      }
      if (i == len) {
        this.pos = pos;
        return this;
      }
    }
    this.ensureCapacity(len * 3 + 5);
    const lenPrefixSizeGuess = varint32Size(len);
    const buf = this.buffer;
    const start = this.pos;
    const { written } = this.encodeUtf8Into(value, buf.subarray(start + lenPrefixSizeGuess));
    const lenPrefixSize = varint32Size(written);
    if (lenPrefixSize != lenPrefixSizeGuess) {
      buf.copyWithin(start + lenPrefixSize, start + lenPrefixSizeGuess, start + lenPrefixSizeGuess + written);
    }
    this.uint32(written);
    this.pos += written;
    return this;
  }
  /**
   * Write a `float` value, 32-bit floating point number.
   */
  float(value) {
    assertFloat32(value);
    this.ensureCapacity(4);
    this.view().setFloat32(this.pos, value, true);
    this.pos += 4;
    return this;
  }
  /**
   * Write a `double` value, a 64-bit floating point number.
   */
  double(value) {
    this.ensureCapacity(8);
    this.view().setFloat64(this.pos, value, true);
    this.pos += 8;
    return this;
  }
  /**
   * Write a `fixed32` value, an unsigned, fixed-length 32-bit integer.
   */
  fixed32(value) {
    assertUInt32(value);
    this.ensureCapacity(4);
    this.view().setUint32(this.pos, value, true);
    this.pos += 4;
    return this;
  }
  /**
   * Write a `sfixed32` value, a signed, fixed-length 32-bit integer.
   */
  sfixed32(value) {
    assertInt32(value);
    this.ensureCapacity(4);
    this.view().setInt32(this.pos, value, true);
    this.pos += 4;
    return this;
  }
  /**
   * Write a `sint32` value, a signed, zigzag-encoded 32-bit varint.
   */
  sint32(value) {
    assertInt32(value);
    return this.uint32((value << 1 ^ value >> 31) >>> 0);
  }
  /**
   * Write a `sfixed64` value, a signed, fixed-length 64-bit integer.
   */
  sfixed64(value) {
    const tc = protoInt64.enc(value);
    this.ensureCapacity(8);
    const view = this.view();
    view.setInt32(this.pos, tc.lo, true);
    view.setInt32(this.pos + 4, tc.hi, true);
    this.pos += 8;
    return this;
  }
  /**
   * Write a `fixed64` value, an unsigned, fixed-length 64 bit integer.
   */
  fixed64(value) {
    const tc = protoInt64.uEnc(value);
    this.ensureCapacity(8);
    const view = this.view();
    view.setInt32(this.pos, tc.lo, true);
    view.setInt32(this.pos + 4, tc.hi, true);
    this.pos += 8;
    return this;
  }
  /**
   * Write a `int64` value, a signed 64-bit varint.
   */
  int64(value) {
    const tc = protoInt64.enc(value);
    return this.writeVarint64(tc.lo, tc.hi);
  }
  /**
   * Write a `sint64` value, a signed, zig-zag-encoded 64-bit varint.
   */
  sint64(value) {
    const tc = protoInt64.enc(value), sign = tc.hi >> 31, lo = tc.lo << 1 ^ sign, hi = (tc.hi << 1 | tc.lo >>> 31) ^ sign;
    return this.writeVarint64(lo, hi);
  }
  /**
   * Write a `uint64` value, an unsigned 64-bit varint.
   */
  uint64(value) {
    const tc = protoInt64.uEnc(value);
    return this.writeVarint64(tc.lo, tc.hi);
  }
  /**
   * Write a 64-bit varint directly into the buffer. Accepts the value as
   * split low/high 32-bit words.
   *
   * Ported from varint64write() to avoid the intermediate number[] buffer.
   * See https://github.com/protocolbuffers/protobuf/blob/8a71927d74a4ce34efe2d8769fda198f52d20d12/js/experimental/runtime/kernel/writer.js#L344
   */
  writeVarint64(lo, hi) {
    this.ensureCapacity(10);
    const buf = this.buffer;
    let pos = this.pos;
    for (let i = 0; i < 28; i = i + 7) {
      const shift = lo >>> i;
      const hasNext = !(shift >>> 7 == 0 && hi == 0);
      buf[pos++] = (hasNext ? shift | 128 : shift) & 255;
      if (!hasNext) {
        this.pos = pos;
        return this;
      }
    }
    const splitBits = lo >>> 28 & 15 | (hi & 7) << 4;
    const hasMoreBits = !(hi >> 3 == 0);
    buf[pos++] = (hasMoreBits ? splitBits | 128 : splitBits) & 255;
    if (!hasMoreBits) {
      this.pos = pos;
      return this;
    }
    for (let i = 3; i < 31; i = i + 7) {
      const shift = hi >>> i;
      const hasNext = !(shift >>> 7 == 0);
      buf[pos++] = (hasNext ? shift | 128 : shift) & 255;
      if (!hasNext) {
        this.pos = pos;
        return this;
      }
    }
    buf[pos++] = hi >>> 31 & 1;
    this.pos = pos;
    return this;
  }
};
var INITIAL_SIZE = 128;
var DEFAULT_LEN_PREFIX_SIZE = 1;
var EMPTY_BUFFER = new Uint8Array(0);
var EMPTY_VIEW = new DataView(EMPTY_BUFFER.buffer);
var ASCII_MAX_LENGTH = 32;
function varint32Size(value) {
  if (value < 128)
    return 1;
  if (value < 16384)
    return 2;
  if (value < 2097152)
    return 3;
  if (value < 268435456)
    return 4;
  return 5;
}
var BinaryReader = class {
  constructor(buf, decodeUtf8 = getTextEncoding().decodeUtf8) {
    this.decodeUtf8 = decodeUtf8;
    this.varint64Lo = 0;
    this.varint64Hi = 0;
    this.varint64 = varint64read;
    this.uint32 = varint32read;
    this.buf = buf;
    this.len = buf.length;
    this.pos = 0;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  /**
   * Reads a tag - field number and wire type. Tags are uint32 varints; values
   * that do not fit in uint32 are rejected.
   */
  tag() {
    const start = this.pos;
    const tag = this.uint32();
    const bytesRead = this.pos - start;
    if (bytesRead > 5 || bytesRead == 5 && this.buf[this.pos - 1] > 15) {
      throw new Error("illegal tag: varint overflows uint32");
    }
    const fieldNo = tag >>> 3;
    const wireType = tag & 7;
    if (fieldNo <= 0 || wireType > 5) {
      throw new Error("illegal tag: field no " + fieldNo + " wire type " + wireType);
    }
    return [fieldNo, wireType];
  }
  /**
   * Skip one element and return the skipped data.
   *
   * When skipping StartGroup, provide the tags field number to check for
   * matching field number in the EndGroup tag. Recursion into nested groups
   * is guarded by the `recursionLimit` argument: When the limit is reached,
   * this method throws.
   */
  skip(wireType, fieldNo, recursionLimit = 100) {
    let start = this.pos;
    switch (wireType) {
      case WireType.Varint:
        while (this.buf[this.pos++] & 128) {
        }
        break;
      // @ts-ignore TS7029: Fallthrough case in switch -- ignore instead of expect-error for compiler settings without noFallthroughCasesInSwitch: true
      case WireType.Bit64:
        this.pos += 4;
      case WireType.Bit32:
        this.pos += 4;
        break;
      case WireType.LengthDelimited:
        let len = this.uint32();
        this.pos += len;
        break;
      case WireType.StartGroup:
        if (recursionLimit <= 0) {
          throw new Error("maximum recursion depth reached");
        }
        for (; ; ) {
          const [fn, wt] = this.tag();
          if (wt === WireType.EndGroup) {
            if (fieldNo !== void 0 && fn !== fieldNo) {
              throw new Error("invalid end group tag");
            }
            break;
          }
          this.skip(wt, fn, recursionLimit - 1);
        }
        break;
      default:
        throw new Error("cant skip wire type " + wireType);
    }
    this.assertBounds();
    return this.buf.subarray(start, this.pos);
  }
  /**
   * Throws error if position in byte array is out of range.
   */
  assertBounds() {
    if (this.pos > this.len)
      throw new RangeError("premature EOF");
  }
  /**
   * Read a `int32` field, a signed 32 bit varint.
   */
  int32() {
    return this.uint32() | 0;
  }
  /**
   * Read a `sint32` field, a signed, zigzag-encoded 32-bit varint.
   */
  sint32() {
    let zze = this.uint32();
    return zze >>> 1 ^ -(zze & 1);
  }
  /**
   * Read a `int64` field, a signed 64-bit varint.
   */
  int64() {
    this.varint64();
    return protoInt64.dec(this.varint64Lo, this.varint64Hi);
  }
  /**
   * Read a `uint64` field, an unsigned 64-bit varint.
   */
  uint64() {
    this.varint64();
    return protoInt64.uDec(this.varint64Lo, this.varint64Hi);
  }
  /**
   * Read a `sint64` field, a signed, zig-zag-encoded 64-bit varint.
   */
  sint64() {
    this.varint64();
    let lo = this.varint64Lo;
    let hi = this.varint64Hi;
    let s = -(lo & 1);
    lo = (lo >>> 1 | (hi & 1) << 31) ^ s;
    hi = hi >>> 1 ^ s;
    return protoInt64.dec(lo, hi);
  }
  /**
   * Read a `bool` field, a variant.
   */
  bool() {
    const b = this.buf[this.pos];
    if (b < 128) {
      this.pos++;
      return b !== 0;
    }
    this.varint64();
    return this.varint64Lo !== 0 || this.varint64Hi !== 0;
  }
  /**
   * Read a `fixed32` field, an unsigned, fixed-length 32-bit integer.
   */
  fixed32() {
    return this.view.getUint32((this.pos += 4) - 4, true);
  }
  /**
   * Read a `sfixed32` field, a signed, fixed-length 32-bit integer.
   */
  sfixed32() {
    return this.view.getInt32((this.pos += 4) - 4, true);
  }
  /**
   * Read a `fixed64` field, an unsigned, fixed-length 64 bit integer.
   */
  fixed64() {
    return protoInt64.uDec(this.sfixed32(), this.sfixed32());
  }
  /**
   * Read a `fixed64` field, a signed, fixed-length 64-bit integer.
   */
  sfixed64() {
    return protoInt64.dec(this.sfixed32(), this.sfixed32());
  }
  /**
   * Read a `float` field, 32-bit floating point number.
   */
  float() {
    return this.view.getFloat32((this.pos += 4) - 4, true);
  }
  /**
   * Read a `double` field, a 64-bit floating point number.
   */
  double() {
    return this.view.getFloat64((this.pos += 8) - 8, true);
  }
  /**
   * Read a `bytes` field, length-delimited arbitrary data.
   */
  bytes() {
    let len = this.uint32(), start = this.pos;
    this.pos += len;
    this.assertBounds();
    return this.buf.subarray(start, start + len);
  }
  /**
   * Read a `string` field, length-delimited data converted to UTF-8 text. If
   * `strict` is true, throw on invalid UTF-8 instead of substituting U+FFFD.
   */
  string(strict) {
    const len = this.uint32();
    const start = this.pos;
    this.pos += len;
    this.assertBounds();
    const buf = this.buf;
    if (len <= ASCII_MAX_LENGTH) {
      const codes = new Array(len);
      for (let i = 0; i < len; i++) {
        const byte = buf[start + i];
        if (byte > 127) {
          return this.decodeUtf8(buf.subarray(start, this.pos), strict);
        }
        codes[i] = byte;
      }
      return String.fromCharCode.apply(String, codes);
    }
    return this.decodeUtf8(buf.subarray(start, this.pos), strict);
  }
};
function assertInt32(arg) {
  if (typeof arg == "string") {
    arg = Number(arg);
  } else if (typeof arg != "number") {
    throw new Error("invalid int32: " + typeof arg);
  }
  if (!Number.isInteger(arg) || arg > INT32_MAX || arg < INT32_MIN)
    throw new Error("invalid int32: " + arg);
}
function assertUInt32(arg) {
  if (typeof arg == "string") {
    arg = Number(arg);
  } else if (typeof arg != "number") {
    throw new Error("invalid uint32: " + typeof arg);
  }
  if (!Number.isInteger(arg) || arg > UINT32_MAX || arg < 0)
    throw new Error("invalid uint32: " + arg);
}
function assertFloat32(arg) {
  if (typeof arg == "string") {
    const o = arg;
    arg = Number(arg);
    if (Number.isNaN(arg) && o !== "NaN") {
      throw new Error("invalid float32: " + o);
    }
  } else if (typeof arg != "number") {
    throw new Error("invalid float32: " + typeof arg);
  }
  if (!Number.isFinite(Math.fround(arg)) && Number.isFinite(arg)) {
    throw new Error("invalid float32: " + arg);
  }
}

// node_modules/@bufbuild/protobuf/dist/esm/reflect/reflect-check.js
function checkField(field, value) {
  const check = field.fieldKind == "list" ? isReflectList(value, field) : field.fieldKind == "map" ? isReflectMap(value, field) : checkSingular(field, value);
  if (check === true) {
    return void 0;
  }
  let reason;
  switch (field.fieldKind) {
    case "list":
      reason = `expected ${formatReflectList(field)}, got ${formatVal(value)}`;
      break;
    case "map":
      reason = `expected ${formatReflectMap(field)}, got ${formatVal(value)}`;
      break;
    default: {
      reason = reasonSingular(field, value, check);
    }
  }
  return new FieldError(field, reason);
}
function checkListItem(field, index, value) {
  const check = checkSingular(field, value);
  if (check !== true) {
    return new FieldError(field, `list item #${index + 1}: ${reasonSingular(field, value, check)}`);
  }
  return void 0;
}
function checkMapEntry(field, key, value) {
  const checkKey = checkScalarValue(field.mapKey)(key);
  if (checkKey !== true) {
    return new FieldError(field, `invalid map key: ${reasonSingular({ scalar: field.mapKey }, key, checkKey)}`);
  }
  const checkVal = checkSingular(field, value);
  if (checkVal !== true) {
    return new FieldError(field, `map entry ${formatVal(key)}: ${reasonSingular(field, value, checkVal)}`);
  }
  return void 0;
}
function checkSingular(field, value) {
  if (field.scalar !== void 0) {
    return checkScalarValue(field.scalar)(value);
  }
  if (field.enum !== void 0) {
    if (field.enum.open) {
      return checkScalarValue(ScalarType.INT32)(value);
    }
    return field.enum.values.some((v) => v.number === value);
  }
  return isReflectMessage(value, field.message);
}
function checkScalarValue(scalar) {
  switch (scalar) {
    case ScalarType.DOUBLE:
      return (value) => typeof value == "number";
    case ScalarType.FLOAT:
      return (value) => {
        if (typeof value != "number") {
          return false;
        }
        if (!Number.isFinite(Math.fround(value)) && Number.isFinite(value)) {
          return `${value.toFixed()} out of range`;
        }
        return true;
      };
    case ScalarType.INT32:
    case ScalarType.SFIXED32:
    case ScalarType.SINT32:
      return (value) => {
        if (typeof value !== "number" || !Number.isInteger(value)) {
          return false;
        }
        if (value > INT32_MAX || value < INT32_MIN) {
          return `${value.toFixed()} out of range`;
        }
        return true;
      };
    case ScalarType.FIXED32:
    case ScalarType.UINT32:
      return (value) => {
        if (typeof value !== "number" || !Number.isInteger(value)) {
          return false;
        }
        if (value > UINT32_MAX || value < 0) {
          return `${value.toFixed()} out of range`;
        }
        return true;
      };
    case ScalarType.BOOL:
      return (value) => typeof value == "boolean";
    case ScalarType.STRING:
      return (value) => {
        if (typeof value != "string") {
          return false;
        }
        return getTextEncoding().checkUtf8(value) || "invalid UTF8";
      };
    case ScalarType.BYTES:
      return (value) => value instanceof Uint8Array;
    case ScalarType.INT64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return (value) => {
        if (typeof value == "bigint" || typeof value == "number" || typeof value == "string" && value.length > 0) {
          try {
            protoInt64.parse(value);
            return true;
          } catch (_) {
            return `${value} out of range`;
          }
        }
        return false;
      };
    case ScalarType.FIXED64:
    case ScalarType.UINT64:
      return (value) => {
        if (typeof value == "bigint" || typeof value == "number" || typeof value == "string" && value.length > 0) {
          try {
            protoInt64.uParse(value);
            return true;
          } catch (_) {
            return `${value} out of range`;
          }
        }
        return false;
      };
  }
}
function reasonSingular(field, val, details2) {
  details2 = typeof details2 == "string" ? `: ${details2}` : `, got ${formatVal(val)}`;
  if (field.scalar !== void 0) {
    return `expected ${scalarTypeDescription(field.scalar)}` + details2;
  }
  if (field.enum !== void 0) {
    return `expected ${field.enum.toString()}` + details2;
  }
  return `expected ${formatReflectMessage(field.message)}` + details2;
}
function formatVal(val) {
  switch (typeof val) {
    case "object":
      if (val === null) {
        return "null";
      }
      if (val instanceof Uint8Array) {
        return `Uint8Array(${val.length})`;
      }
      if (Array.isArray(val)) {
        return `Array(${val.length})`;
      }
      if (isReflectList(val)) {
        return formatReflectList(val.field());
      }
      if (isReflectMap(val)) {
        return formatReflectMap(val.field());
      }
      if (isReflectMessage(val)) {
        return formatReflectMessage(val.desc);
      }
      if (isMessage(val)) {
        return `message ${val.$typeName}`;
      }
      return "object";
    case "string":
      return val.length > 30 ? "string" : `"${val.split('"').join('\\"')}"`;
    case "boolean":
      return String(val);
    case "number":
      return String(val);
    case "bigint":
      return String(val) + "n";
    default:
      return typeof val;
  }
}
function formatReflectMessage(desc) {
  return `ReflectMessage (${desc.typeName})`;
}
function formatReflectList(field) {
  switch (field.listKind) {
    case "message":
      return `ReflectList (${field.message.toString()})`;
    case "enum":
      return `ReflectList (${field.enum.toString()})`;
    case "scalar":
      return `ReflectList (${ScalarType[field.scalar]})`;
  }
}
function formatReflectMap(field) {
  switch (field.mapKind) {
    case "message":
      return `ReflectMap (${ScalarType[field.mapKey]}, ${field.message.toString()})`;
    case "enum":
      return `ReflectMap (${ScalarType[field.mapKey]}, ${field.enum.toString()})`;
    case "scalar":
      return `ReflectMap (${ScalarType[field.mapKey]}, ${ScalarType[field.scalar]})`;
  }
}
function scalarTypeDescription(scalar) {
  switch (scalar) {
    case ScalarType.STRING:
      return "string";
    case ScalarType.BOOL:
      return "boolean";
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return "bigint (int64)";
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return "bigint (uint64)";
    case ScalarType.BYTES:
      return "Uint8Array";
    case ScalarType.DOUBLE:
      return "number (float64)";
    case ScalarType.FLOAT:
      return "number (float32)";
    case ScalarType.FIXED32:
    case ScalarType.UINT32:
      return "number (uint32)";
    case ScalarType.INT32:
    case ScalarType.SFIXED32:
    case ScalarType.SINT32:
      return "number (int32)";
  }
}

// node_modules/@bufbuild/protobuf/dist/esm/reflect/message.js
var NULL_VALUE = 0;
function localMessageMapper(field) {
  if (usesJsonRepresentation(field)) {
    return {
      toMessage: (local) => wktStructToReflect(local),
      toLocal: (message2) => wktStructToLocal(message2)
    };
  }
  if (field.fieldKind == "message" && !field.oneof && isWrapperDesc(field.message)) {
    const wrapperDesc = field.message;
    const valueLocalName = wrapperDesc.fields[0].localName;
    return {
      toMessage: (local) => {
        const message2 = create(wrapperDesc);
        if (local !== void 0) {
          message2[valueLocalName] = local;
        }
        return message2;
      },
      toLocal: (message2) => message2[valueLocalName]
    };
  }
  const childDesc = field.message;
  return {
    toMessage: (local) => local === void 0 ? create(childDesc) : local,
    toLocal: (message2) => message2
  };
}
function usesJsonRepresentation(field) {
  return field.message.typeName == "google.protobuf.Struct" && field.parent.typeName != "google.protobuf.Value";
}
function wktStructToReflect(json) {
  const struct = {
    $typeName: "google.protobuf.Struct",
    fields: {}
  };
  if (isObject(json)) {
    for (const k of Object.keys(json)) {
      setOwn(struct.fields, k, wktValueToReflect(json[k]));
    }
  }
  return struct;
}
function wktStructToLocal(val) {
  const json = {};
  for (const k of Object.keys(val.fields)) {
    setOwn(json, k, wktValueToLocal(val.fields[k]));
  }
  return json;
}
function wktValueToLocal(val) {
  switch (val.kind.case) {
    case "structValue":
      return wktStructToLocal(val.kind.value);
    case "listValue":
      return val.kind.value.values.map(wktValueToLocal);
    case "nullValue":
    case void 0:
      return null;
    default:
      return val.kind.value;
  }
}
function wktValueToReflect(json) {
  const value = {
    $typeName: "google.protobuf.Value",
    kind: { case: void 0 }
  };
  switch (typeof json) {
    case "number":
      value.kind = { case: "numberValue", value: json };
      break;
    case "string":
      value.kind = { case: "stringValue", value: json };
      break;
    case "boolean":
      value.kind = { case: "boolValue", value: json };
      break;
    case "object":
      if (json === null) {
        value.kind = { case: "nullValue", value: NULL_VALUE };
      } else if (Array.isArray(json)) {
        const listValue = {
          $typeName: "google.protobuf.ListValue",
          values: []
        };
        if (Array.isArray(json)) {
          for (const e of json) {
            listValue.values.push(wktValueToReflect(e));
          }
        }
        value.kind = {
          case: "listValue",
          value: listValue
        };
      } else {
        value.kind = {
          case: "structValue",
          value: wktStructToReflect(json)
        };
      }
      break;
  }
  return value;
}

// node_modules/@bufbuild/protobuf/dist/esm/reflect/reflect.js
function reflect(messageDesc2, message2, check = true) {
  return new ReflectMessageImpl(messageDesc2, message2, check);
}
var messageSortedFields = /* @__PURE__ */ new WeakMap();
var ReflectMessageImpl = class {
  get sortedFields() {
    const cached = messageSortedFields.get(this.desc);
    if (cached) {
      return cached;
    }
    const sortedFields = this.desc.fields.concat().sort((a, b) => a.number - b.number);
    messageSortedFields.set(this.desc, sortedFields);
    return sortedFields;
  }
  constructor(messageDesc2, message2, check = true) {
    this.lists = /* @__PURE__ */ new Map();
    this.maps = /* @__PURE__ */ new Map();
    this.check = check;
    this.desc = messageDesc2;
    this.message = this[unsafeLocal] = message2 !== null && message2 !== void 0 ? message2 : create(messageDesc2);
    this.fields = messageDesc2.fields;
    this.oneofs = messageDesc2.oneofs;
    this.members = messageDesc2.members;
  }
  findNumber(number) {
    if (!this._fieldsByNumber) {
      this._fieldsByNumber = new Map(this.desc.fields.map((f) => [f.number, f]));
    }
    return this._fieldsByNumber.get(number);
  }
  oneofCase(oneof) {
    assertOwn(this.message, oneof);
    return unsafeOneofCase(this.message, oneof);
  }
  isSet(field) {
    assertOwn(this.message, field);
    return unsafeIsSet(this.message, field);
  }
  clear(field) {
    assertOwn(this.message, field);
    unsafeClear(this.message, field);
  }
  get(field) {
    assertOwn(this.message, field);
    const value = unsafeGet(this.message, field);
    switch (field.fieldKind) {
      case "list":
        let list = this.lists.get(field);
        if (!list || list[unsafeLocal] !== value) {
          this.lists.set(
            field,
            // biome-ignore lint/suspicious/noAssignInExpressions: no
            list = new ReflectListImpl(field, value, this.check)
          );
        }
        return list;
      case "map":
        let map = this.maps.get(field);
        if (!map || map[unsafeLocal] !== value) {
          this.maps.set(
            field,
            // biome-ignore lint/suspicious/noAssignInExpressions: no
            map = new ReflectMapImpl(field, value, this.check)
          );
        }
        return map;
      case "message":
        return messageToReflect(field, value, this.check);
      case "scalar":
        return value === void 0 ? scalarZeroValue(field.scalar, false) : longToReflect(field, value);
      case "enum":
        return value !== null && value !== void 0 ? value : field.enum.values[0].number;
    }
  }
  set(field, value) {
    assertOwn(this.message, field);
    if (this.check) {
      const err = checkField(field, value);
      if (err) {
        throw err;
      }
    }
    let local;
    if (field.fieldKind == "message") {
      local = messageToLocal(field, value);
    } else if (isReflectMap(value) || isReflectList(value)) {
      local = value[unsafeLocal];
    } else {
      local = longToLocal(field, value);
    }
    unsafeSet(this.message, field, local);
  }
  getUnknown() {
    return this.message.$unknown;
  }
  setUnknown(value) {
    this.message.$unknown = value;
  }
};
function assertOwn(owner, member) {
  if (member.parent.typeName !== owner.$typeName) {
    throw new FieldError(member, `cannot use ${member.toString()} with message ${owner.$typeName}`, "ForeignFieldError");
  }
}
var ReflectListImpl = class {
  field() {
    return this._field;
  }
  get size() {
    return this._arr.length;
  }
  constructor(field, unsafeInput, check) {
    this._field = field;
    this._arr = this[unsafeLocal] = unsafeInput;
    this.check = check;
  }
  get(index) {
    const item = this._arr[index];
    return item === void 0 ? void 0 : listItemToReflect(this._field, item, this.check);
  }
  set(index, item) {
    if (index < 0 || index >= this._arr.length) {
      throw new FieldError(this._field, `list item #${index + 1}: out of range`);
    }
    if (this.check) {
      const err = checkListItem(this._field, index, item);
      if (err) {
        throw err;
      }
    }
    this._arr[index] = listItemToLocal(this._field, item);
  }
  add(item) {
    if (this.check) {
      const err = checkListItem(this._field, this._arr.length, item);
      if (err) {
        throw err;
      }
    }
    this._arr.push(listItemToLocal(this._field, item));
    return void 0;
  }
  clear() {
    this._arr.splice(0, this._arr.length);
  }
  [Symbol.iterator]() {
    return this.values();
  }
  keys() {
    return this._arr.keys();
  }
  *values() {
    for (const item of this._arr) {
      yield listItemToReflect(this._field, item, this.check);
    }
  }
  *entries() {
    for (let i = 0; i < this._arr.length; i++) {
      yield [i, listItemToReflect(this._field, this._arr[i], this.check)];
    }
  }
};
var ReflectMapImpl = class {
  constructor(field, unsafeInput, check = true) {
    this.obj = this[unsafeLocal] = unsafeInput !== null && unsafeInput !== void 0 ? unsafeInput : {};
    this.check = check;
    this._field = field;
  }
  field() {
    return this._field;
  }
  set(key, value) {
    if (this.check) {
      const err = checkMapEntry(this._field, key, value);
      if (err) {
        throw err;
      }
    }
    setOwn(this.obj, mapKeyToLocal(key), mapValueToLocal(this._field, value));
    return this;
  }
  delete(key) {
    const k = mapKeyToLocal(key);
    const has = Object.prototype.hasOwnProperty.call(this.obj, k);
    if (has) {
      delete this.obj[k];
    }
    return has;
  }
  clear() {
    for (const key of Object.keys(this.obj)) {
      delete this.obj[key];
    }
  }
  get(key) {
    let val = getOwn(this.obj, mapKeyToLocal(key));
    if (val !== void 0) {
      val = mapValueToReflect(this._field, val, this.check);
    }
    return val;
  }
  has(key) {
    return Object.prototype.hasOwnProperty.call(this.obj, mapKeyToLocal(key));
  }
  *keys() {
    for (const objKey of Object.keys(this.obj)) {
      yield mapKeyToReflect(objKey, this._field.mapKey);
    }
  }
  *entries() {
    for (const objEntry of Object.entries(this.obj)) {
      yield [
        mapKeyToReflect(objEntry[0], this._field.mapKey),
        mapValueToReflect(this._field, objEntry[1], this.check)
      ];
    }
  }
  [Symbol.iterator]() {
    return this.entries();
  }
  get size() {
    return Object.keys(this.obj).length;
  }
  *values() {
    for (const val of Object.values(this.obj)) {
      yield mapValueToReflect(this._field, val, this.check);
    }
  }
  forEach(callbackfn, thisArg) {
    for (const mapEntry of this.entries()) {
      callbackfn.call(thisArg, mapEntry[1], mapEntry[0], this);
    }
  }
};
function messageToLocal(field, value) {
  if (!isReflectMessage(value)) {
    return value;
  }
  if (isWrapper(value.message) && !field.oneof && field.fieldKind == "message") {
    return value.message.value;
  }
  if (value.desc.typeName == "google.protobuf.Struct" && field.parent.typeName != "google.protobuf.Value") {
    return wktStructToLocal(value.message);
  }
  return value.message;
}
function messageToReflect(field, value, check) {
  if (value !== void 0) {
    if (isWrapperDesc(field.message) && !field.oneof && field.fieldKind == "message") {
      value = {
        $typeName: field.message.typeName,
        value: longToReflect(field.message.fields[0], value)
      };
    } else if (field.message.typeName == "google.protobuf.Struct" && field.parent.typeName != "google.protobuf.Value" && isObject(value)) {
      value = wktStructToReflect(value);
    }
  }
  return new ReflectMessageImpl(field.message, value, check);
}
function listItemToLocal(field, value) {
  if (field.listKind == "message") {
    return messageToLocal(field, value);
  }
  return longToLocal(field, value);
}
function listItemToReflect(field, value, check) {
  if (field.listKind == "message") {
    return messageToReflect(field, value, check);
  }
  return longToReflect(field, value);
}
function mapValueToLocal(field, value) {
  if (field.mapKind == "message") {
    return messageToLocal(field, value);
  }
  return longToLocal(field, value);
}
function mapValueToReflect(field, value, check) {
  if (field.mapKind == "message") {
    return messageToReflect(field, value, check);
  }
  return value;
}
function mapKeyToLocal(key) {
  return typeof key == "string" || typeof key == "number" ? key : String(key);
}
function mapKeyToReflect(key, type) {
  switch (type) {
    case ScalarType.STRING:
      return key;
    case ScalarType.INT32:
    case ScalarType.FIXED32:
    case ScalarType.UINT32:
    case ScalarType.SFIXED32:
    case ScalarType.SINT32: {
      const n = Number.parseInt(key);
      if (Number.isFinite(n)) {
        return n;
      }
      break;
    }
    case ScalarType.BOOL:
      switch (key) {
        case "true":
          return true;
        case "false":
          return false;
      }
      break;
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      try {
        return protoInt64.uParse(key);
      } catch (_a) {
      }
      break;
    default:
      try {
        return protoInt64.parse(key);
      } catch (_b) {
      }
      break;
  }
  return key;
}
function longToReflect(field, value) {
  switch (field.scalar) {
    case ScalarType.INT64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      if ("longAsString" in field && field.longAsString && typeof value == "string") {
        value = protoInt64.parse(value);
      }
      break;
    case ScalarType.FIXED64:
    case ScalarType.UINT64:
      if ("longAsString" in field && field.longAsString && typeof value == "string") {
        value = protoInt64.uParse(value);
      }
      break;
  }
  return value;
}
function longToLocal(field, value) {
  switch (field.scalar) {
    case ScalarType.INT64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      if ("longAsString" in field && field.longAsString) {
        value = String(value);
      } else if (typeof value == "string" || typeof value == "number") {
        value = protoInt64.parse(value);
      }
      break;
    case ScalarType.FIXED64:
    case ScalarType.UINT64:
      if ("longAsString" in field && field.longAsString) {
        value = String(value);
      } else if (typeof value == "string" || typeof value == "number") {
        value = protoInt64.uParse(value);
      }
      break;
  }
  return value;
}

// node_modules/@bufbuild/protobuf/dist/esm/wire/base64-encoding.js
var nativeSetFromBase64 = Uint8Array.prototype.setFromBase64;
function base64Decode(base64Str) {
  const len = base64Str.length;
  let size = len - (len + 3 >> 2);
  if ((len & 3) == 0 && base64Str[len - 1] == "=") {
    size -= base64Str[len - 2] == "=" ? 2 : 1;
  }
  const bytes = new Uint8Array(size);
  let written = -1;
  if (nativeSetFromBase64) {
    try {
      const result = nativeSetFromBase64.call(bytes, base64Str);
      if (result.read == len) {
        written = result.written;
      }
    } catch (_a) {
    }
  }
  if (written < 0) {
    written = setFromBase64(bytes, base64Str);
  }
  return written == size ? bytes : bytes.subarray(0, written);
}
function setFromBase64(bytes, base64Str) {
  const table = getDecodeTable();
  let bytePos = 0, groupPos = 0, b, p = 0;
  for (let i = 0; i < base64Str.length; i++) {
    b = table[base64Str.charCodeAt(i)];
    if (b === void 0) {
      switch (base64Str[i]) {
        // @ts-ignore TS7029: Fallthrough case in switch -- ignore instead of expect-error for compiler settings without noFallthroughCasesInSwitch: true
        case "=":
          groupPos = 0;
        // reset state when padding found
        case "\n":
        case "\r":
        case "	":
        case " ":
          continue;
        // skip white-space, and padding
        default:
          throw Error("invalid base64 string");
      }
    }
    switch (groupPos) {
      case 0:
        p = b;
        groupPos = 1;
        break;
      case 1:
        bytes[bytePos++] = p << 2 | (b & 48) >> 4;
        p = b;
        groupPos = 2;
        break;
      case 2:
        bytes[bytePos++] = (p & 15) << 4 | (b & 60) >> 2;
        p = b;
        groupPos = 3;
        break;
      case 3:
        bytes[bytePos++] = (p & 3) << 6 | b;
        groupPos = 0;
        break;
    }
  }
  if (groupPos == 1)
    throw Error("invalid base64 string");
  return bytePos;
}
var nativeToBase64 = Uint8Array.prototype.toBase64;
var toBase64OptionsMap = {
  std: { alphabet: "base64", omitPadding: false },
  std_raw: { alphabet: "base64", omitPadding: true },
  url: { alphabet: "base64url", omitPadding: true }
};
function base64Encode(bytes, encoding = "std") {
  if (nativeToBase64) {
    return nativeToBase64.call(bytes, toBase64OptionsMap[encoding]);
  }
  const table = getEncodeTable(encoding);
  const pad = encoding == "std";
  let base64 = "", groupPos = 0, b, p = 0;
  for (let i = 0; i < bytes.length; i++) {
    b = bytes[i];
    switch (groupPos) {
      case 0:
        base64 += table[b >> 2];
        p = (b & 3) << 4;
        groupPos = 1;
        break;
      case 1:
        base64 += table[p | b >> 4];
        p = (b & 15) << 2;
        groupPos = 2;
        break;
      case 2:
        base64 += table[p | b >> 6];
        base64 += table[b & 63];
        groupPos = 0;
        break;
    }
  }
  if (groupPos) {
    base64 += table[p];
    if (pad) {
      base64 += "=";
      if (groupPos == 1)
        base64 += "=";
    }
  }
  return base64;
}
var encodeTableStd;
var encodeTableUrl;
var decodeTable;
function getEncodeTable(encoding) {
  if (!encodeTableStd) {
    encodeTableStd = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".split("");
    encodeTableUrl = encodeTableStd.slice(0, -2).concat("-", "_");
  }
  return encoding == "url" ? (
    // biome-ignore lint/style/noNonNullAssertion: TS fails to narrow down
    encodeTableUrl
  ) : encodeTableStd;
}
function getDecodeTable() {
  if (!decodeTable) {
    decodeTable = [];
    const encodeTable = getEncodeTable("std");
    for (let i = 0; i < encodeTable.length; i++)
      decodeTable[encodeTable[i].charCodeAt(0)] = i;
    decodeTable["-".charCodeAt(0)] = encodeTable.indexOf("+");
    decodeTable["_".charCodeAt(0)] = encodeTable.indexOf("/");
  }
  return decodeTable;
}

// node_modules/@bufbuild/protobuf/dist/esm/reflect/names.js
function protoCamelCase(snakeCase) {
  let capNext = false;
  const b = [];
  for (let i = 0; i < snakeCase.length; i++) {
    let c = snakeCase.charAt(i);
    switch (c) {
      case "_":
        capNext = true;
        break;
      case "0":
      case "1":
      case "2":
      case "3":
      case "4":
      case "5":
      case "6":
      case "7":
      case "8":
      case "9":
        b.push(c);
        capNext = false;
        break;
      default:
        if (capNext) {
          capNext = false;
          c = c.toUpperCase();
        }
        b.push(c);
        break;
    }
  }
  return b.join("");
}
function protoSnakeCase(lowerCamelCase) {
  return lowerCamelCase.replace(/[A-Z]/g, (letter) => "_" + letter.toLowerCase());
}
var reservedObjectProperties = /* @__PURE__ */ new Set([
  // names reserved by JavaScript
  "constructor",
  "toString",
  "toJSON",
  "valueOf"
]);
function safeObjectProperty(name) {
  return reservedObjectProperties.has(name) ? name + "$" : name;
}

// node_modules/@bufbuild/protobuf/dist/esm/codegenv2/restore-json-names.js
function restoreJsonNames(message2) {
  for (const f of message2.field) {
    if (!unsafeIsSetExplicit(f, "jsonName")) {
      f.jsonName = protoCamelCase(f.name);
    }
  }
  message2.nestedType.forEach(restoreJsonNames);
}

// node_modules/@bufbuild/protobuf/dist/esm/wire/text-format.js
function parseTextFormatEnumValue(descEnum, value) {
  const enumValue = descEnum.values.find((v) => v.name === value);
  if (!enumValue) {
    throw new Error(`cannot parse ${descEnum} default value: ${value}`);
  }
  return enumValue.number;
}
function parseTextFormatScalarValue(type, value) {
  switch (type) {
    case ScalarType.STRING:
      return value;
    case ScalarType.BYTES: {
      const u = unescapeBytesDefaultValue(value);
      if (u === false) {
        throw new Error(`cannot parse ${ScalarType[type]} default value: ${value}`);
      }
      return u;
    }
    case ScalarType.INT64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return protoInt64.parse(value);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return protoInt64.uParse(value);
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      switch (value) {
        case "inf":
          return Number.POSITIVE_INFINITY;
        case "-inf":
          return Number.NEGATIVE_INFINITY;
        case "nan":
          return Number.NaN;
        default:
          return parseFloat(value);
      }
    case ScalarType.BOOL:
      return value === "true";
    case ScalarType.INT32:
    case ScalarType.UINT32:
    case ScalarType.SINT32:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return parseInt(value, 10);
  }
}
function unescapeBytesDefaultValue(str) {
  const b = [];
  const input = {
    tail: str,
    c: "",
    next() {
      if (this.tail.length == 0) {
        return false;
      }
      this.c = this.tail[0];
      this.tail = this.tail.substring(1);
      return true;
    },
    take(n) {
      if (this.tail.length >= n) {
        const r = this.tail.substring(0, n);
        this.tail = this.tail.substring(n);
        return r;
      }
      return false;
    }
  };
  while (input.next()) {
    switch (input.c) {
      case "\\":
        if (input.next()) {
          switch (input.c) {
            case "\\":
              b.push(input.c.charCodeAt(0));
              break;
            case "b":
              b.push(8);
              break;
            case "f":
              b.push(12);
              break;
            case "n":
              b.push(10);
              break;
            case "r":
              b.push(13);
              break;
            case "t":
              b.push(9);
              break;
            case "v":
              b.push(11);
              break;
            case "0":
            case "1":
            case "2":
            case "3":
            case "4":
            case "5":
            case "6":
            case "7": {
              const s = input.c;
              const t = input.take(2);
              if (t === false) {
                return false;
              }
              const n = parseInt(s + t, 8);
              if (Number.isNaN(n)) {
                return false;
              }
              b.push(n);
              break;
            }
            case "x": {
              const s = input.c;
              const t = input.take(2);
              if (t === false) {
                return false;
              }
              const n = parseInt(s + t, 16);
              if (Number.isNaN(n)) {
                return false;
              }
              b.push(n);
              break;
            }
            case "u": {
              const s = input.c;
              const t = input.take(4);
              if (t === false) {
                return false;
              }
              const n = parseInt(s + t, 16);
              if (Number.isNaN(n)) {
                return false;
              }
              const chunk = new Uint8Array(4);
              const view = new DataView(chunk.buffer);
              view.setInt32(0, n, true);
              b.push(chunk[0], chunk[1], chunk[2], chunk[3]);
              break;
            }
            case "U": {
              const s = input.c;
              const t = input.take(8);
              if (t === false) {
                return false;
              }
              const tc = protoInt64.uEnc(s + t);
              const chunk = new Uint8Array(8);
              const view = new DataView(chunk.buffer);
              view.setInt32(0, tc.lo, true);
              view.setInt32(4, tc.hi, true);
              b.push(chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7]);
              break;
            }
          }
        }
        break;
      default:
        b.push(input.c.charCodeAt(0));
    }
  }
  return new Uint8Array(b);
}

// node_modules/@bufbuild/protobuf/dist/esm/reflect/nested-types.js
function* nestedTypes(desc) {
  switch (desc.kind) {
    case "file":
      for (const message2 of desc.messages) {
        yield message2;
        yield* nestedTypes(message2);
      }
      yield* desc.enums;
      yield* desc.services;
      yield* desc.extensions;
      break;
    case "message":
      for (const message2 of desc.nestedMessages) {
        yield message2;
        yield* nestedTypes(message2);
      }
      yield* desc.nestedEnums;
      yield* desc.nestedExtensions;
      break;
  }
}

// node_modules/@bufbuild/protobuf/dist/esm/registry.js
function createEmbeddedFileRegistry(fileDescriptorProto, resolve) {
  return buildFileRegistry([fileDescriptorProto, resolve]);
}
function buildFileRegistry(args, check) {
  const registry = createBaseRegistry();
  if (!args.length) {
    return registry;
  }
  if ("$typeName" in args[0] && args[0].$typeName == "google.protobuf.FileDescriptorSet") {
    for (const file of args[0].file) {
      check === null || check === void 0 ? void 0 : check(file);
      addFile(file, registry);
    }
    return registry;
  }
  if ("$typeName" in args[0]) {
    let recurseDeps = function(file) {
      const deps = [];
      for (const protoFileName of file.dependency) {
        if (registry.getFile(protoFileName) != void 0) {
          continue;
        }
        if (seen.has(protoFileName)) {
          continue;
        }
        const dep = resolve(protoFileName);
        if (!dep) {
          throw new Error(`Unable to resolve ${protoFileName}, imported by ${file.name}`);
        }
        if ("kind" in dep) {
          registry.addFile(dep, false, true);
        } else {
          seen.add(dep.name);
          deps.push(dep);
        }
      }
      return deps.concat(...deps.map(recurseDeps));
    };
    const input = args[0];
    const resolve = args[1];
    const seen = /* @__PURE__ */ new Set();
    for (const file of [input, ...recurseDeps(input)].reverse()) {
      check === null || check === void 0 ? void 0 : check(file);
      addFile(file, registry);
    }
  } else {
    for (const fileReg of args) {
      for (const file of fileReg.files) {
        registry.addFile(file);
      }
    }
  }
  return registry;
}
function createBaseRegistry() {
  const types = /* @__PURE__ */ new Map();
  const extendees = /* @__PURE__ */ new Map();
  const files = /* @__PURE__ */ new Map();
  return {
    kind: "registry",
    types,
    extendees,
    [Symbol.iterator]() {
      return types.values();
    },
    get files() {
      return files.values();
    },
    addFile(file, skipTypes, withDeps) {
      files.set(file.proto.name, file);
      if (!skipTypes) {
        for (const type of nestedTypes(file)) {
          this.add(type);
        }
      }
      if (withDeps) {
        for (const f of file.dependencies) {
          this.addFile(f, skipTypes, withDeps);
        }
      }
    },
    add(desc) {
      if (desc.kind == "extension") {
        let numberToExt = extendees.get(desc.extendee.typeName);
        if (!numberToExt) {
          extendees.set(
            desc.extendee.typeName,
            // biome-ignore lint/suspicious/noAssignInExpressions: no
            numberToExt = /* @__PURE__ */ new Map()
          );
        }
        numberToExt.set(desc.number, desc);
      }
      types.set(desc.typeName, desc);
    },
    get(typeName) {
      return types.get(typeName);
    },
    getFile(fileName) {
      return files.get(fileName);
    },
    getMessage(typeName) {
      const t = types.get(typeName);
      return (t === null || t === void 0 ? void 0 : t.kind) == "message" ? t : void 0;
    },
    getEnum(typeName) {
      const t = types.get(typeName);
      return (t === null || t === void 0 ? void 0 : t.kind) == "enum" ? t : void 0;
    },
    getExtension(typeName) {
      const t = types.get(typeName);
      return (t === null || t === void 0 ? void 0 : t.kind) == "extension" ? t : void 0;
    },
    getExtensionFor(extendee, no) {
      var _a;
      return (_a = extendees.get(extendee.typeName)) === null || _a === void 0 ? void 0 : _a.get(no);
    },
    getService(typeName) {
      const t = types.get(typeName);
      return (t === null || t === void 0 ? void 0 : t.kind) == "service" ? t : void 0;
    }
  };
}
var EDITION_PROTO22 = 998;
var EDITION_PROTO32 = 999;
var EDITION_UNSTABLE = 9999;
var TYPE_STRING = 9;
var TYPE_GROUP = 10;
var TYPE_MESSAGE = 11;
var TYPE_BYTES = 12;
var TYPE_ENUM = 14;
var LABEL_REPEATED = 3;
var LABEL_REQUIRED = 2;
var JS_STRING = 1;
var IDEMPOTENCY_UNKNOWN = 0;
var EXPLICIT = 1;
var IMPLICIT3 = 2;
var LEGACY_REQUIRED = 3;
var PACKED = 1;
var DELIMITED = 2;
var OPEN = 1;
var VERIFY = 2;
var maximumEdition = 1002;
var featureDefaults = {
  // EDITION_PROTO2
  998: {
    fieldPresence: 1,
    // EXPLICIT,
    enumType: 2,
    // CLOSED,
    repeatedFieldEncoding: 2,
    // EXPANDED,
    utf8Validation: 3,
    // NONE,
    messageEncoding: 1,
    // LENGTH_PREFIXED,
    jsonFormat: 2,
    // LEGACY_BEST_EFFORT,
    enforceNamingStyle: 2,
    // STYLE_LEGACY,
    defaultSymbolVisibility: 1,
    // EXPORT_ALL,
    enforceProtoLimits: 1
    // LEGACY_NO_EXPLICIT_LIMITS,
  },
  // EDITION_PROTO3
  999: {
    fieldPresence: 2,
    // IMPLICIT,
    enumType: 1,
    // OPEN,
    repeatedFieldEncoding: 1,
    // PACKED,
    utf8Validation: 2,
    // VERIFY,
    messageEncoding: 1,
    // LENGTH_PREFIXED,
    jsonFormat: 1,
    // ALLOW,
    enforceNamingStyle: 2,
    // STYLE_LEGACY,
    defaultSymbolVisibility: 1,
    // EXPORT_ALL,
    enforceProtoLimits: 1
    // LEGACY_NO_EXPLICIT_LIMITS,
  },
  // EDITION_2023
  1e3: {
    fieldPresence: 1,
    // EXPLICIT,
    enumType: 1,
    // OPEN,
    repeatedFieldEncoding: 1,
    // PACKED,
    utf8Validation: 2,
    // VERIFY,
    messageEncoding: 1,
    // LENGTH_PREFIXED,
    jsonFormat: 1,
    // ALLOW,
    enforceNamingStyle: 2,
    // STYLE_LEGACY,
    defaultSymbolVisibility: 1,
    // EXPORT_ALL,
    enforceProtoLimits: 1
    // LEGACY_NO_EXPLICIT_LIMITS,
  },
  // EDITION_2024
  1001: {
    fieldPresence: 1,
    // EXPLICIT,
    enumType: 1,
    // OPEN,
    repeatedFieldEncoding: 1,
    // PACKED,
    utf8Validation: 2,
    // VERIFY,
    messageEncoding: 1,
    // LENGTH_PREFIXED,
    jsonFormat: 1,
    // ALLOW,
    enforceNamingStyle: 1,
    // STYLE2024,
    defaultSymbolVisibility: 2,
    // EXPORT_TOP_LEVEL,
    enforceProtoLimits: 1
    // LEGACY_NO_EXPLICIT_LIMITS,
  },
  // EDITION_2026
  1002: {
    fieldPresence: 1,
    // EXPLICIT,
    enumType: 1,
    // OPEN,
    repeatedFieldEncoding: 1,
    // PACKED,
    utf8Validation: 2,
    // VERIFY,
    messageEncoding: 1,
    // LENGTH_PREFIXED,
    jsonFormat: 1,
    // ALLOW,
    enforceNamingStyle: 3,
    // STYLE2026,
    defaultSymbolVisibility: 4,
    // STRICT,
    enforceProtoLimits: 2
    // PROTO_LIMITS2026,
  }
};
function addFile(proto, reg) {
  var _a, _b;
  const file = {
    kind: "file",
    proto,
    deprecated: (_b = (_a = proto.options) === null || _a === void 0 ? void 0 : _a.deprecated) !== null && _b !== void 0 ? _b : false,
    edition: getFileEdition(proto),
    name: proto.name.replace(/\.proto$/, ""),
    dependencies: findFileDependencies(proto, reg),
    enums: [],
    messages: [],
    extensions: [],
    services: [],
    toString() {
      return `file ${proto.name}`;
    }
  };
  const mapEntriesStore = /* @__PURE__ */ new Map();
  const mapEntries = {
    get(typeName) {
      return mapEntriesStore.get(typeName);
    },
    add(desc) {
      var _a2;
      assert(((_a2 = desc.proto.options) === null || _a2 === void 0 ? void 0 : _a2.mapEntry) === true);
      mapEntriesStore.set(desc.typeName, desc);
    }
  };
  for (const enumProto of proto.enumType) {
    addEnum(enumProto, file, void 0, reg);
  }
  for (const messageProto of proto.messageType) {
    addMessage(messageProto, file, void 0, reg, mapEntries);
  }
  for (const serviceProto of proto.service) {
    addService(serviceProto, file, reg);
  }
  addExtensions(file, reg);
  for (const mapEntry of mapEntriesStore.values()) {
    addFields(mapEntry, reg, mapEntries);
  }
  for (const message2 of file.messages) {
    addFields(message2, reg, mapEntries);
    addExtensions(message2, reg);
  }
  reg.addFile(file, true);
}
function addExtensions(desc, reg) {
  switch (desc.kind) {
    case "file":
      for (const proto of desc.proto.extension) {
        const ext = newField(proto, desc, reg);
        desc.extensions.push(ext);
        reg.add(ext);
      }
      break;
    case "message":
      for (const proto of desc.proto.extension) {
        const ext = newField(proto, desc, reg);
        desc.nestedExtensions.push(ext);
        reg.add(ext);
      }
      for (const message2 of desc.nestedMessages) {
        addExtensions(message2, reg);
      }
      break;
  }
}
function addFields(message2, reg, mapEntries) {
  const allOneofs = message2.proto.oneofDecl.map((proto) => newOneof(proto, message2));
  const oneofsSeen = /* @__PURE__ */ new Set();
  for (const proto of message2.proto.field) {
    const oneof = findOneof(proto, allOneofs);
    const field = newField(proto, message2, reg, oneof, mapEntries);
    message2.fields.push(field);
    message2.field[field.localName] = field;
    if (oneof === void 0) {
      message2.members.push(field);
    } else {
      oneof.fields.push(field);
      if (!oneofsSeen.has(oneof)) {
        oneofsSeen.add(oneof);
        message2.members.push(oneof);
      }
    }
  }
  for (const oneof of allOneofs.filter((o) => oneofsSeen.has(o))) {
    message2.oneofs.push(oneof);
  }
  for (const child of message2.nestedMessages) {
    addFields(child, reg, mapEntries);
  }
}
function addEnum(proto, file, parent, reg) {
  var _a, _b, _c, _d, _e, _f, _g;
  var _h, _j;
  const sharedPrefix = findEnumSharedPrefix(proto.name, proto.value);
  const desc = {
    kind: "enum",
    proto,
    deprecated: (_b = (_a = proto.options) === null || _a === void 0 ? void 0 : _a.deprecated) !== null && _b !== void 0 ? _b : false,
    file,
    parent,
    open: true,
    name: proto.name,
    typeName: makeTypeName(proto, parent, file),
    value: {},
    values: [],
    sharedPrefix,
    toString() {
      return `enum ${this.typeName}`;
    }
  };
  desc.open = isEnumOpen(desc);
  reg.add(desc);
  for (const p of proto.value) {
    const name = p.name;
    const value = {
      kind: "enum_value",
      proto: p,
      deprecated: (_d = (_c = p.options) === null || _c === void 0 ? void 0 : _c.deprecated) !== null && _d !== void 0 ? _d : false,
      parent: desc,
      name,
      localName: safeObjectProperty(sharedPrefix == void 0 ? name : name.substring(sharedPrefix.length)),
      number: p.number,
      jsonName: (_e = findEnumValueJsonName(p)) !== null && _e !== void 0 ? _e : name,
      toString() {
        return `enum value ${desc.typeName}.${name}`;
      }
    };
    desc.values.push(value);
    (_f = (_h = desc.value)[_j = p.number]) !== null && _f !== void 0 ? _f : _h[_j] = value;
  }
  ((_g = parent === null || parent === void 0 ? void 0 : parent.nestedEnums) !== null && _g !== void 0 ? _g : file.enums).push(desc);
}
function addMessage(proto, file, parent, reg, mapEntries) {
  var _a, _b, _c, _d;
  const desc = {
    kind: "message",
    proto,
    deprecated: (_b = (_a = proto.options) === null || _a === void 0 ? void 0 : _a.deprecated) !== null && _b !== void 0 ? _b : false,
    file,
    parent,
    name: proto.name,
    typeName: makeTypeName(proto, parent, file),
    fields: [],
    field: {},
    oneofs: [],
    members: [],
    nestedEnums: [],
    nestedMessages: [],
    nestedExtensions: [],
    toString() {
      return `message ${this.typeName}`;
    }
  };
  if (((_c = proto.options) === null || _c === void 0 ? void 0 : _c.mapEntry) === true) {
    mapEntries.add(desc);
  } else {
    ((_d = parent === null || parent === void 0 ? void 0 : parent.nestedMessages) !== null && _d !== void 0 ? _d : file.messages).push(desc);
    reg.add(desc);
  }
  for (const enumProto of proto.enumType) {
    addEnum(enumProto, file, desc, reg);
  }
  for (const messageProto of proto.nestedType) {
    addMessage(messageProto, file, desc, reg, mapEntries);
  }
}
function addService(proto, file, reg) {
  var _a, _b;
  const desc = {
    kind: "service",
    proto,
    deprecated: (_b = (_a = proto.options) === null || _a === void 0 ? void 0 : _a.deprecated) !== null && _b !== void 0 ? _b : false,
    file,
    name: proto.name,
    typeName: makeTypeName(proto, void 0, file),
    methods: [],
    method: {},
    toString() {
      return `service ${this.typeName}`;
    }
  };
  file.services.push(desc);
  reg.add(desc);
  for (const methodProto of proto.method) {
    const method = newMethod(methodProto, desc, reg);
    desc.methods.push(method);
    desc.method[method.localName] = method;
  }
}
function newMethod(proto, parent, reg) {
  var _a, _b, _c, _d;
  let methodKind;
  if (proto.clientStreaming && proto.serverStreaming) {
    methodKind = "bidi_streaming";
  } else if (proto.clientStreaming) {
    methodKind = "client_streaming";
  } else if (proto.serverStreaming) {
    methodKind = "server_streaming";
  } else {
    methodKind = "unary";
  }
  const input = reg.getMessage(trimLeadingDot(proto.inputType));
  const output = reg.getMessage(trimLeadingDot(proto.outputType));
  assert(input, `invalid MethodDescriptorProto: input_type ${proto.inputType} not found`);
  assert(output, `invalid MethodDescriptorProto: output_type ${proto.inputType} not found`);
  const name = proto.name;
  return {
    kind: "rpc",
    proto,
    deprecated: (_b = (_a = proto.options) === null || _a === void 0 ? void 0 : _a.deprecated) !== null && _b !== void 0 ? _b : false,
    parent,
    name,
    localName: safeObjectProperty(name.length ? safeObjectProperty(name[0].toLowerCase() + name.substring(1)) : name),
    methodKind,
    input,
    output,
    idempotency: (_d = (_c = proto.options) === null || _c === void 0 ? void 0 : _c.idempotencyLevel) !== null && _d !== void 0 ? _d : IDEMPOTENCY_UNKNOWN,
    toString() {
      return `rpc ${parent.typeName}.${name}`;
    }
  };
}
function newOneof(proto, parent) {
  return {
    kind: "oneof",
    proto,
    deprecated: false,
    parent,
    fields: [],
    name: proto.name,
    localName: safeObjectProperty(protoCamelCase(proto.name)),
    toString() {
      return `oneof ${parent.typeName}.${this.name}`;
    }
  };
}
function newField(proto, parentOrFile, reg, oneof, mapEntries) {
  var _a, _b, _c;
  const isExtension = mapEntries === void 0;
  const field = {
    kind: "field",
    proto,
    deprecated: (_b = (_a = proto.options) === null || _a === void 0 ? void 0 : _a.deprecated) !== null && _b !== void 0 ? _b : false,
    name: proto.name,
    number: proto.number,
    scalar: void 0,
    message: void 0,
    enum: void 0,
    presence: getFieldPresence(proto, oneof, isExtension, parentOrFile),
    utf8Validation: isUtf8Validated(proto, parentOrFile),
    listKind: void 0,
    mapKind: void 0,
    mapKey: void 0,
    delimitedEncoding: void 0,
    packed: void 0,
    longAsString: false,
    getDefaultValue: void 0
  };
  let toStr;
  if (isExtension) {
    const file = parentOrFile.kind == "file" ? parentOrFile : parentOrFile.file;
    const parent = parentOrFile.kind == "file" ? void 0 : parentOrFile;
    const typeName = makeTypeName(proto, parent, file);
    field.kind = "extension";
    field.file = file;
    field.parent = parent;
    field.oneof = void 0;
    field.typeName = typeName;
    field.jsonName = `[${typeName}]`;
    toStr = () => `extension ${typeName}`;
    const extendee = reg.getMessage(trimLeadingDot(proto.extendee));
    assert(extendee, `invalid FieldDescriptorProto: extendee ${proto.extendee} not found`);
    field.extendee = extendee;
  } else {
    const parent = parentOrFile;
    assert(parent.kind == "message");
    field.parent = parent;
    field.oneof = oneof;
    field.localName = oneof ? protoCamelCase(proto.name) : safeObjectProperty(protoCamelCase(proto.name));
    field.jsonName = proto.jsonName;
    toStr = () => `field ${parent.typeName}.${proto.name}`;
  }
  Object.defineProperty(field, "toString", {
    value: toStr,
    writable: true,
    enumerable: true,
    configurable: true
  });
  const label = proto.label;
  const type = proto.type;
  const jstype = (_c = proto.options) === null || _c === void 0 ? void 0 : _c.jstype;
  if (label === LABEL_REPEATED) {
    const mapEntry = type == TYPE_MESSAGE ? mapEntries === null || mapEntries === void 0 ? void 0 : mapEntries.get(trimLeadingDot(proto.typeName)) : void 0;
    if (mapEntry) {
      field.fieldKind = "map";
      const { key, value } = findMapEntryFields(mapEntry);
      field.mapKey = key.scalar;
      field.mapKind = value.fieldKind;
      field.message = value.message;
      field.delimitedEncoding = false;
      field.enum = value.enum;
      field.scalar = value.scalar;
      return field;
    }
    field.fieldKind = "list";
    switch (type) {
      case TYPE_MESSAGE:
      case TYPE_GROUP:
        field.listKind = "message";
        field.message = reg.getMessage(trimLeadingDot(proto.typeName));
        assert(field.message);
        field.delimitedEncoding = isDelimitedEncoding(proto, parentOrFile);
        break;
      case TYPE_ENUM:
        field.listKind = "enum";
        field.enum = reg.getEnum(trimLeadingDot(proto.typeName));
        assert(field.enum);
        break;
      default:
        field.listKind = "scalar";
        field.scalar = type;
        field.longAsString = jstype == JS_STRING;
        break;
    }
    field.packed = isPackedField(proto, parentOrFile);
    return field;
  }
  switch (type) {
    case TYPE_MESSAGE:
    case TYPE_GROUP:
      field.fieldKind = "message";
      field.message = reg.getMessage(trimLeadingDot(proto.typeName));
      assert(field.message, `invalid FieldDescriptorProto: type_name ${proto.typeName} not found`);
      field.delimitedEncoding = isDelimitedEncoding(proto, parentOrFile);
      field.getDefaultValue = () => void 0;
      break;
    case TYPE_ENUM: {
      const enumeration = reg.getEnum(trimLeadingDot(proto.typeName));
      assert(enumeration !== void 0, `invalid FieldDescriptorProto: type_name ${proto.typeName} not found`);
      field.fieldKind = "enum";
      field.enum = reg.getEnum(trimLeadingDot(proto.typeName));
      field.getDefaultValue = () => {
        return unsafeIsSetExplicit(proto, "defaultValue") ? parseTextFormatEnumValue(enumeration, proto.defaultValue) : void 0;
      };
      break;
    }
    default: {
      field.fieldKind = "scalar";
      field.scalar = type;
      field.longAsString = jstype == JS_STRING;
      field.getDefaultValue = () => {
        return unsafeIsSetExplicit(proto, "defaultValue") ? parseTextFormatScalarValue(type, proto.defaultValue) : void 0;
      };
      break;
    }
  }
  return field;
}
function getFileEdition(proto) {
  switch (proto.syntax) {
    case "":
    case "proto2":
      return EDITION_PROTO22;
    case "proto3":
      return EDITION_PROTO32;
    case "editions":
      if (proto.edition === EDITION_UNSTABLE) {
        return maximumEdition;
      }
      if (proto.edition in featureDefaults) {
        return proto.edition;
      }
      throw new Error(`${proto.name}: unsupported edition`);
    default:
      throw new Error(`${proto.name}: unsupported syntax "${proto.syntax}"`);
  }
}
function findFileDependencies(proto, reg) {
  return proto.dependency.map((wantName) => {
    const dep = reg.getFile(wantName);
    if (!dep) {
      throw new Error(`Cannot find ${wantName}, imported by ${proto.name}`);
    }
    return dep;
  });
}
function findEnumSharedPrefix(enumName, values) {
  const prefix = camelToSnakeCase(enumName) + "_";
  for (const value of values) {
    if (!value.name.toLowerCase().startsWith(prefix)) {
      return void 0;
    }
    const shortName = value.name.substring(prefix.length);
    if (shortName.length == 0) {
      return void 0;
    }
    if (/^\d/.test(shortName)) {
      return void 0;
    }
  }
  return prefix;
}
function findEnumValueJsonName(proto) {
  var _a, _b;
  const extensionNumber = 998;
  const fieldNumber = 1;
  let jsonName;
  for (const uf of (_b = (_a = proto.options) === null || _a === void 0 ? void 0 : _a.$unknown) !== null && _b !== void 0 ? _b : []) {
    if (uf.no !== extensionNumber || uf.wireType !== WireType.LengthDelimited) {
      continue;
    }
    const reader = new BinaryReader(new BinaryReader(uf.data).bytes());
    while (reader.pos < reader.len) {
      const [no, wireType] = reader.tag();
      if (no === fieldNumber && wireType === WireType.LengthDelimited) {
        jsonName = reader.string();
      } else {
        reader.skip(wireType, no);
      }
    }
  }
  return jsonName;
}
function camelToSnakeCase(camel) {
  return (camel.substring(0, 1) + camel.substring(1).replace(/[A-Z]/g, (c) => "_" + c)).toLowerCase();
}
function makeTypeName(proto, parent, file) {
  let typeName;
  if (parent) {
    typeName = `${parent.typeName}.${proto.name}`;
  } else if (file.proto.package.length > 0) {
    typeName = `${file.proto.package}.${proto.name}`;
  } else {
    typeName = `${proto.name}`;
  }
  return typeName;
}
function trimLeadingDot(typeName) {
  return typeName.startsWith(".") ? typeName.substring(1) : typeName;
}
function findOneof(proto, allOneofs) {
  if (!unsafeIsSetExplicit(proto, "oneofIndex")) {
    return void 0;
  }
  if (proto.proto3Optional) {
    return void 0;
  }
  const oneof = allOneofs[proto.oneofIndex];
  assert(oneof, `invalid FieldDescriptorProto: oneof #${proto.oneofIndex} for field #${proto.number} not found`);
  return oneof;
}
function getFieldPresence(proto, oneof, isExtension, parent) {
  if (proto.label == LABEL_REQUIRED) {
    return LEGACY_REQUIRED;
  }
  if (proto.label == LABEL_REPEATED) {
    return IMPLICIT3;
  }
  if (!!oneof || proto.proto3Optional) {
    return EXPLICIT;
  }
  if (isExtension) {
    return EXPLICIT;
  }
  const resolved = resolveFeature("fieldPresence", { proto, parent });
  if (resolved == IMPLICIT3 && (proto.type == TYPE_MESSAGE || proto.type == TYPE_GROUP)) {
    return EXPLICIT;
  }
  return resolved;
}
function isPackedField(proto, parent) {
  if (proto.label != LABEL_REPEATED) {
    return false;
  }
  switch (proto.type) {
    case TYPE_STRING:
    case TYPE_BYTES:
    case TYPE_GROUP:
    case TYPE_MESSAGE:
      return false;
  }
  const o = proto.options;
  if (o && unsafeIsSetExplicit(o, "packed")) {
    return o.packed;
  }
  return PACKED == resolveFeature("repeatedFieldEncoding", {
    proto,
    parent
  });
}
function findMapEntryFields(mapEntry) {
  const key = mapEntry.fields.find((f) => f.number === 1);
  const value = mapEntry.fields.find((f) => f.number === 2);
  assert(key && key.fieldKind == "scalar" && key.scalar != ScalarType.BYTES && key.scalar != ScalarType.FLOAT && key.scalar != ScalarType.DOUBLE && value && value.fieldKind != "list" && value.fieldKind != "map");
  return { key, value };
}
function isEnumOpen(desc) {
  var _a;
  return OPEN == resolveFeature("enumType", {
    proto: desc.proto,
    parent: (_a = desc.parent) !== null && _a !== void 0 ? _a : desc.file
  });
}
function isDelimitedEncoding(proto, parent) {
  if (proto.type == TYPE_GROUP) {
    return true;
  }
  return DELIMITED == resolveFeature("messageEncoding", {
    proto,
    parent
  });
}
function isUtf8Validated(proto, parent) {
  return VERIFY == resolveFeature("utf8Validation", {
    proto,
    parent
  });
}
function resolveFeature(name, ref) {
  var _a, _b;
  const featureSet = (_a = ref.proto.options) === null || _a === void 0 ? void 0 : _a.features;
  if (featureSet) {
    const val = featureSet[name];
    if (val != 0) {
      return val;
    }
  }
  if ("kind" in ref) {
    if (ref.kind == "message") {
      return resolveFeature(name, (_b = ref.parent) !== null && _b !== void 0 ? _b : ref.file);
    }
    const editionDefaults = featureDefaults[ref.edition];
    if (!editionDefaults) {
      throw new Error(`feature default for edition ${ref.edition} not found`);
    }
    return editionDefaults[name];
  }
  return resolveFeature(name, ref.parent);
}
function assert(condition, msg) {
  if (!condition) {
    throw new Error(msg);
  }
}

// node_modules/@bufbuild/protobuf/dist/esm/codegenv2/boot.js
function boot(boot2) {
  const root = bootFileDescriptorProto(boot2);
  root.messageType.forEach(restoreJsonNames);
  const reg = createEmbeddedFileRegistry(root, () => void 0);
  return reg.getFile(root.name);
}
function bootFileDescriptorProto(init) {
  const proto = /* @__PURE__ */ Object.create({
    syntax: "",
    edition: 0
  });
  return Object.assign(proto, Object.assign(Object.assign({ $typeName: "google.protobuf.FileDescriptorProto", dependency: [], publicDependency: [], weakDependency: [], optionDependency: [], service: [], extension: [] }, init), { messageType: init.messageType.map(bootDescriptorProto), enumType: init.enumType.map(bootEnumDescriptorProto) }));
}
function bootDescriptorProto(init) {
  var _a, _b, _c, _d, _e, _f, _g, _h;
  const proto = /* @__PURE__ */ Object.create({
    visibility: 0
  });
  return Object.assign(proto, {
    $typeName: "google.protobuf.DescriptorProto",
    name: init.name,
    field: (_b = (_a = init.field) === null || _a === void 0 ? void 0 : _a.map(bootFieldDescriptorProto)) !== null && _b !== void 0 ? _b : [],
    extension: [],
    nestedType: (_d = (_c = init.nestedType) === null || _c === void 0 ? void 0 : _c.map(bootDescriptorProto)) !== null && _d !== void 0 ? _d : [],
    enumType: (_f = (_e = init.enumType) === null || _e === void 0 ? void 0 : _e.map(bootEnumDescriptorProto)) !== null && _f !== void 0 ? _f : [],
    extensionRange: (_h = (_g = init.extensionRange) === null || _g === void 0 ? void 0 : _g.map((e) => Object.assign({ $typeName: "google.protobuf.DescriptorProto.ExtensionRange" }, e))) !== null && _h !== void 0 ? _h : [],
    oneofDecl: [],
    reservedRange: [],
    reservedName: []
  });
}
function bootFieldDescriptorProto(init) {
  const proto = /* @__PURE__ */ Object.create({
    label: 1,
    typeName: "",
    extendee: "",
    defaultValue: "",
    oneofIndex: 0,
    jsonName: "",
    proto3Optional: false
  });
  return Object.assign(proto, Object.assign(Object.assign({ $typeName: "google.protobuf.FieldDescriptorProto" }, init), { options: init.options ? bootFieldOptions(init.options) : void 0 }));
}
function bootFieldOptions(init) {
  var _a, _b, _c;
  const proto = /* @__PURE__ */ Object.create({
    ctype: 0,
    packed: false,
    jstype: 0,
    lazy: false,
    unverifiedLazy: false,
    deprecated: false,
    weak: false,
    debugRedact: false,
    retention: 0
  });
  return Object.assign(proto, Object.assign(Object.assign({ $typeName: "google.protobuf.FieldOptions" }, init), { targets: (_a = init.targets) !== null && _a !== void 0 ? _a : [], editionDefaults: (_c = (_b = init.editionDefaults) === null || _b === void 0 ? void 0 : _b.map((e) => Object.assign({ $typeName: "google.protobuf.FieldOptions.EditionDefault" }, e))) !== null && _c !== void 0 ? _c : [], uninterpretedOption: [] }));
}
function bootEnumDescriptorProto(init) {
  const proto = /* @__PURE__ */ Object.create({
    visibility: 0
  });
  return Object.assign(proto, {
    $typeName: "google.protobuf.EnumDescriptorProto",
    name: init.name,
    reservedName: [],
    reservedRange: [],
    value: init.value.map((e) => Object.assign({ $typeName: "google.protobuf.EnumValueDescriptorProto" }, e))
  });
}

// node_modules/@bufbuild/protobuf/dist/esm/codegenv2/message.js
function messageDesc(file, path2, ...paths) {
  return paths.reduce((acc, cur) => acc.nestedMessages[cur], file.messages[path2]);
}

// node_modules/@bufbuild/protobuf/dist/esm/codegenv2/enum.js
function enumDesc(file, path2, ...paths) {
  if (paths.length == 0) {
    return file.enums[path2];
  }
  const e = paths.pop();
  return paths.reduce((acc, cur) => acc.nestedMessages[cur], file.messages[path2]).nestedEnums[e];
}

// node_modules/@bufbuild/protobuf/dist/esm/wkt/google/protobuf/descriptor_pb.js
var file_google_protobuf_descriptor = /* @__PURE__ */ boot({ "name": "google/protobuf/descriptor.proto", "package": "google.protobuf", "messageType": [{ "name": "FileDescriptorSet", "field": [{ "name": "file", "number": 1, "type": 11, "label": 3, "typeName": ".google.protobuf.FileDescriptorProto" }], "extensionRange": [{ "start": 536e6, "end": 536000001 }] }, { "name": "FileDescriptorProto", "field": [{ "name": "name", "number": 1, "type": 9, "label": 1 }, { "name": "package", "number": 2, "type": 9, "label": 1 }, { "name": "dependency", "number": 3, "type": 9, "label": 3 }, { "name": "public_dependency", "number": 10, "type": 5, "label": 3 }, { "name": "weak_dependency", "number": 11, "type": 5, "label": 3 }, { "name": "option_dependency", "number": 15, "type": 9, "label": 3 }, { "name": "message_type", "number": 4, "type": 11, "label": 3, "typeName": ".google.protobuf.DescriptorProto" }, { "name": "enum_type", "number": 5, "type": 11, "label": 3, "typeName": ".google.protobuf.EnumDescriptorProto" }, { "name": "service", "number": 6, "type": 11, "label": 3, "typeName": ".google.protobuf.ServiceDescriptorProto" }, { "name": "extension", "number": 7, "type": 11, "label": 3, "typeName": ".google.protobuf.FieldDescriptorProto" }, { "name": "options", "number": 8, "type": 11, "label": 1, "typeName": ".google.protobuf.FileOptions" }, { "name": "source_code_info", "number": 9, "type": 11, "label": 1, "typeName": ".google.protobuf.SourceCodeInfo" }, { "name": "syntax", "number": 12, "type": 9, "label": 1 }, { "name": "edition", "number": 14, "type": 14, "label": 1, "typeName": ".google.protobuf.Edition" }] }, { "name": "DescriptorProto", "field": [{ "name": "name", "number": 1, "type": 9, "label": 1 }, { "name": "field", "number": 2, "type": 11, "label": 3, "typeName": ".google.protobuf.FieldDescriptorProto" }, { "name": "extension", "number": 6, "type": 11, "label": 3, "typeName": ".google.protobuf.FieldDescriptorProto" }, { "name": "nested_type", "number": 3, "type": 11, "label": 3, "typeName": ".google.protobuf.DescriptorProto" }, { "name": "enum_type", "number": 4, "type": 11, "label": 3, "typeName": ".google.protobuf.EnumDescriptorProto" }, { "name": "extension_range", "number": 5, "type": 11, "label": 3, "typeName": ".google.protobuf.DescriptorProto.ExtensionRange" }, { "name": "oneof_decl", "number": 8, "type": 11, "label": 3, "typeName": ".google.protobuf.OneofDescriptorProto" }, { "name": "options", "number": 7, "type": 11, "label": 1, "typeName": ".google.protobuf.MessageOptions" }, { "name": "reserved_range", "number": 9, "type": 11, "label": 3, "typeName": ".google.protobuf.DescriptorProto.ReservedRange" }, { "name": "reserved_name", "number": 10, "type": 9, "label": 3 }, { "name": "visibility", "number": 11, "type": 14, "label": 1, "typeName": ".google.protobuf.SymbolVisibility" }], "nestedType": [{ "name": "ExtensionRange", "field": [{ "name": "start", "number": 1, "type": 5, "label": 1 }, { "name": "end", "number": 2, "type": 5, "label": 1 }, { "name": "options", "number": 3, "type": 11, "label": 1, "typeName": ".google.protobuf.ExtensionRangeOptions" }] }, { "name": "ReservedRange", "field": [{ "name": "start", "number": 1, "type": 5, "label": 1 }, { "name": "end", "number": 2, "type": 5, "label": 1 }] }] }, { "name": "ExtensionRangeOptions", "field": [{ "name": "uninterpreted_option", "number": 999, "type": 11, "label": 3, "typeName": ".google.protobuf.UninterpretedOption" }, { "name": "declaration", "number": 2, "type": 11, "label": 3, "typeName": ".google.protobuf.ExtensionRangeOptions.Declaration", "options": { "retention": 2 } }, { "name": "features", "number": 50, "type": 11, "label": 1, "typeName": ".google.protobuf.FeatureSet" }, { "name": "verification", "number": 3, "type": 14, "label": 1, "typeName": ".google.protobuf.ExtensionRangeOptions.VerificationState", "defaultValue": "UNVERIFIED", "options": { "retention": 2 } }], "nestedType": [{ "name": "Declaration", "field": [{ "name": "number", "number": 1, "type": 5, "label": 1 }, { "name": "full_name", "number": 2, "type": 9, "label": 1 }, { "name": "type", "number": 3, "type": 9, "label": 1 }, { "name": "reserved", "number": 5, "type": 8, "label": 1 }, { "name": "repeated", "number": 6, "type": 8, "label": 1 }] }], "enumType": [{ "name": "VerificationState", "value": [{ "name": "DECLARATION", "number": 0 }, { "name": "UNVERIFIED", "number": 1 }] }], "extensionRange": [{ "start": 990, "end": 999 }, { "start": 1e3, "end": 536870912 }] }, { "name": "FieldDescriptorProto", "field": [{ "name": "name", "number": 1, "type": 9, "label": 1 }, { "name": "number", "number": 3, "type": 5, "label": 1 }, { "name": "label", "number": 4, "type": 14, "label": 1, "typeName": ".google.protobuf.FieldDescriptorProto.Label" }, { "name": "type", "number": 5, "type": 14, "label": 1, "typeName": ".google.protobuf.FieldDescriptorProto.Type" }, { "name": "type_name", "number": 6, "type": 9, "label": 1 }, { "name": "extendee", "number": 2, "type": 9, "label": 1 }, { "name": "default_value", "number": 7, "type": 9, "label": 1 }, { "name": "oneof_index", "number": 9, "type": 5, "label": 1 }, { "name": "json_name", "number": 10, "type": 9, "label": 1 }, { "name": "options", "number": 8, "type": 11, "label": 1, "typeName": ".google.protobuf.FieldOptions" }, { "name": "proto3_optional", "number": 17, "type": 8, "label": 1 }], "enumType": [{ "name": "Type", "value": [{ "name": "TYPE_DOUBLE", "number": 1 }, { "name": "TYPE_FLOAT", "number": 2 }, { "name": "TYPE_INT64", "number": 3 }, { "name": "TYPE_UINT64", "number": 4 }, { "name": "TYPE_INT32", "number": 5 }, { "name": "TYPE_FIXED64", "number": 6 }, { "name": "TYPE_FIXED32", "number": 7 }, { "name": "TYPE_BOOL", "number": 8 }, { "name": "TYPE_STRING", "number": 9 }, { "name": "TYPE_GROUP", "number": 10 }, { "name": "TYPE_MESSAGE", "number": 11 }, { "name": "TYPE_BYTES", "number": 12 }, { "name": "TYPE_UINT32", "number": 13 }, { "name": "TYPE_ENUM", "number": 14 }, { "name": "TYPE_SFIXED32", "number": 15 }, { "name": "TYPE_SFIXED64", "number": 16 }, { "name": "TYPE_SINT32", "number": 17 }, { "name": "TYPE_SINT64", "number": 18 }] }, { "name": "Label", "value": [{ "name": "LABEL_OPTIONAL", "number": 1 }, { "name": "LABEL_REPEATED", "number": 3 }, { "name": "LABEL_REQUIRED", "number": 2 }] }] }, { "name": "OneofDescriptorProto", "field": [{ "name": "name", "number": 1, "type": 9, "label": 1 }, { "name": "options", "number": 2, "type": 11, "label": 1, "typeName": ".google.protobuf.OneofOptions" }] }, { "name": "EnumDescriptorProto", "field": [{ "name": "name", "number": 1, "type": 9, "label": 1 }, { "name": "value", "number": 2, "type": 11, "label": 3, "typeName": ".google.protobuf.EnumValueDescriptorProto" }, { "name": "options", "number": 3, "type": 11, "label": 1, "typeName": ".google.protobuf.EnumOptions" }, { "name": "reserved_range", "number": 4, "type": 11, "label": 3, "typeName": ".google.protobuf.EnumDescriptorProto.EnumReservedRange" }, { "name": "reserved_name", "number": 5, "type": 9, "label": 3 }, { "name": "visibility", "number": 6, "type": 14, "label": 1, "typeName": ".google.protobuf.SymbolVisibility" }], "nestedType": [{ "name": "EnumReservedRange", "field": [{ "name": "start", "number": 1, "type": 5, "label": 1 }, { "name": "end", "number": 2, "type": 5, "label": 1 }] }] }, { "name": "EnumValueDescriptorProto", "field": [{ "name": "name", "number": 1, "type": 9, "label": 1 }, { "name": "number", "number": 2, "type": 5, "label": 1 }, { "name": "options", "number": 3, "type": 11, "label": 1, "typeName": ".google.protobuf.EnumValueOptions" }] }, { "name": "ServiceDescriptorProto", "field": [{ "name": "name", "number": 1, "type": 9, "label": 1 }, { "name": "method", "number": 2, "type": 11, "label": 3, "typeName": ".google.protobuf.MethodDescriptorProto" }, { "name": "options", "number": 3, "type": 11, "label": 1, "typeName": ".google.protobuf.ServiceOptions" }] }, { "name": "MethodDescriptorProto", "field": [{ "name": "name", "number": 1, "type": 9, "label": 1 }, { "name": "input_type", "number": 2, "type": 9, "label": 1 }, { "name": "output_type", "number": 3, "type": 9, "label": 1 }, { "name": "options", "number": 4, "type": 11, "label": 1, "typeName": ".google.protobuf.MethodOptions" }, { "name": "client_streaming", "number": 5, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "server_streaming", "number": 6, "type": 8, "label": 1, "defaultValue": "false" }] }, { "name": "FileOptions", "field": [{ "name": "java_package", "number": 1, "type": 9, "label": 1 }, { "name": "java_outer_classname", "number": 8, "type": 9, "label": 1 }, { "name": "java_multiple_files", "number": 10, "type": 8, "label": 1, "defaultValue": "false", "options": {} }, { "name": "java_generate_equals_and_hash", "number": 20, "type": 8, "label": 1, "options": { "deprecated": true } }, { "name": "java_string_check_utf8", "number": 27, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "optimize_for", "number": 9, "type": 14, "label": 1, "typeName": ".google.protobuf.FileOptions.OptimizeMode", "defaultValue": "SPEED" }, { "name": "go_package", "number": 11, "type": 9, "label": 1 }, { "name": "cc_generic_services", "number": 16, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "java_generic_services", "number": 17, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "py_generic_services", "number": 18, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "deprecated", "number": 23, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "cc_enable_arenas", "number": 31, "type": 8, "label": 1, "defaultValue": "true", "options": {} }, { "name": "objc_class_prefix", "number": 36, "type": 9, "label": 1 }, { "name": "csharp_namespace", "number": 37, "type": 9, "label": 1 }, { "name": "swift_prefix", "number": 39, "type": 9, "label": 1 }, { "name": "php_class_prefix", "number": 40, "type": 9, "label": 1 }, { "name": "php_namespace", "number": 41, "type": 9, "label": 1 }, { "name": "php_metadata_namespace", "number": 44, "type": 9, "label": 1 }, { "name": "ruby_package", "number": 45, "type": 9, "label": 1 }, { "name": "features", "number": 50, "type": 11, "label": 1, "typeName": ".google.protobuf.FeatureSet" }, { "name": "uninterpreted_option", "number": 999, "type": 11, "label": 3, "typeName": ".google.protobuf.UninterpretedOption" }], "enumType": [{ "name": "OptimizeMode", "value": [{ "name": "SPEED", "number": 1 }, { "name": "CODE_SIZE", "number": 2 }, { "name": "LITE_RUNTIME", "number": 3 }] }], "extensionRange": [{ "start": 990, "end": 999 }, { "start": 1e3, "end": 536870912 }] }, { "name": "MessageOptions", "field": [{ "name": "message_set_wire_format", "number": 1, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "no_standard_descriptor_accessor", "number": 2, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "deprecated", "number": 3, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "map_entry", "number": 7, "type": 8, "label": 1 }, { "name": "deprecated_legacy_json_field_conflicts", "number": 11, "type": 8, "label": 1, "options": { "deprecated": true } }, { "name": "features", "number": 12, "type": 11, "label": 1, "typeName": ".google.protobuf.FeatureSet" }, { "name": "uninterpreted_option", "number": 999, "type": 11, "label": 3, "typeName": ".google.protobuf.UninterpretedOption" }], "extensionRange": [{ "start": 990, "end": 999 }, { "start": 1e3, "end": 536870912 }] }, { "name": "FieldOptions", "field": [{ "name": "ctype", "number": 1, "type": 14, "label": 1, "typeName": ".google.protobuf.FieldOptions.CType", "defaultValue": "STRING" }, { "name": "packed", "number": 2, "type": 8, "label": 1 }, { "name": "jstype", "number": 6, "type": 14, "label": 1, "typeName": ".google.protobuf.FieldOptions.JSType", "defaultValue": "JS_NORMAL" }, { "name": "lazy", "number": 5, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "unverified_lazy", "number": 15, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "deprecated", "number": 3, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "weak", "number": 10, "type": 8, "label": 1, "defaultValue": "false", "options": { "deprecated": true } }, { "name": "debug_redact", "number": 16, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "retention", "number": 17, "type": 14, "label": 1, "typeName": ".google.protobuf.FieldOptions.OptionRetention" }, { "name": "targets", "number": 19, "type": 14, "label": 3, "typeName": ".google.protobuf.FieldOptions.OptionTargetType" }, { "name": "edition_defaults", "number": 20, "type": 11, "label": 3, "typeName": ".google.protobuf.FieldOptions.EditionDefault" }, { "name": "features", "number": 21, "type": 11, "label": 1, "typeName": ".google.protobuf.FeatureSet" }, { "name": "feature_support", "number": 22, "type": 11, "label": 1, "typeName": ".google.protobuf.FieldOptions.FeatureSupport" }, { "name": "uninterpreted_option", "number": 999, "type": 11, "label": 3, "typeName": ".google.protobuf.UninterpretedOption" }], "nestedType": [{ "name": "EditionDefault", "field": [{ "name": "edition", "number": 3, "type": 14, "label": 1, "typeName": ".google.protobuf.Edition" }, { "name": "value", "number": 2, "type": 9, "label": 1 }] }, { "name": "FeatureSupport", "field": [{ "name": "edition_introduced", "number": 1, "type": 14, "label": 1, "typeName": ".google.protobuf.Edition" }, { "name": "edition_deprecated", "number": 2, "type": 14, "label": 1, "typeName": ".google.protobuf.Edition" }, { "name": "deprecation_warning", "number": 3, "type": 9, "label": 1 }, { "name": "edition_removed", "number": 4, "type": 14, "label": 1, "typeName": ".google.protobuf.Edition" }, { "name": "removal_error", "number": 5, "type": 9, "label": 1 }] }], "enumType": [{ "name": "CType", "value": [{ "name": "STRING", "number": 0 }, { "name": "CORD", "number": 1 }, { "name": "STRING_PIECE", "number": 2 }] }, { "name": "JSType", "value": [{ "name": "JS_NORMAL", "number": 0 }, { "name": "JS_STRING", "number": 1 }, { "name": "JS_NUMBER", "number": 2 }] }, { "name": "OptionRetention", "value": [{ "name": "RETENTION_UNKNOWN", "number": 0 }, { "name": "RETENTION_RUNTIME", "number": 1 }, { "name": "RETENTION_SOURCE", "number": 2 }] }, { "name": "OptionTargetType", "value": [{ "name": "TARGET_TYPE_UNKNOWN", "number": 0 }, { "name": "TARGET_TYPE_FILE", "number": 1 }, { "name": "TARGET_TYPE_EXTENSION_RANGE", "number": 2 }, { "name": "TARGET_TYPE_MESSAGE", "number": 3 }, { "name": "TARGET_TYPE_FIELD", "number": 4 }, { "name": "TARGET_TYPE_ONEOF", "number": 5 }, { "name": "TARGET_TYPE_ENUM", "number": 6 }, { "name": "TARGET_TYPE_ENUM_ENTRY", "number": 7 }, { "name": "TARGET_TYPE_SERVICE", "number": 8 }, { "name": "TARGET_TYPE_METHOD", "number": 9 }] }], "extensionRange": [{ "start": 990, "end": 999 }, { "start": 1e3, "end": 536870912 }] }, { "name": "OneofOptions", "field": [{ "name": "features", "number": 1, "type": 11, "label": 1, "typeName": ".google.protobuf.FeatureSet" }, { "name": "uninterpreted_option", "number": 999, "type": 11, "label": 3, "typeName": ".google.protobuf.UninterpretedOption" }], "extensionRange": [{ "start": 990, "end": 999 }, { "start": 1e3, "end": 536870912 }] }, { "name": "EnumOptions", "field": [{ "name": "allow_alias", "number": 2, "type": 8, "label": 1 }, { "name": "deprecated", "number": 3, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "deprecated_legacy_json_field_conflicts", "number": 6, "type": 8, "label": 1, "options": { "deprecated": true } }, { "name": "features", "number": 7, "type": 11, "label": 1, "typeName": ".google.protobuf.FeatureSet" }, { "name": "uninterpreted_option", "number": 999, "type": 11, "label": 3, "typeName": ".google.protobuf.UninterpretedOption" }], "extensionRange": [{ "start": 990, "end": 999 }, { "start": 1e3, "end": 536870912 }] }, { "name": "EnumValueOptions", "field": [{ "name": "deprecated", "number": 1, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "features", "number": 2, "type": 11, "label": 1, "typeName": ".google.protobuf.FeatureSet" }, { "name": "debug_redact", "number": 3, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "feature_support", "number": 4, "type": 11, "label": 1, "typeName": ".google.protobuf.FieldOptions.FeatureSupport" }, { "name": "uninterpreted_option", "number": 999, "type": 11, "label": 3, "typeName": ".google.protobuf.UninterpretedOption" }], "extensionRange": [{ "start": 990, "end": 999 }, { "start": 1e3, "end": 536870912 }] }, { "name": "ServiceOptions", "field": [{ "name": "features", "number": 34, "type": 11, "label": 1, "typeName": ".google.protobuf.FeatureSet" }, { "name": "deprecated", "number": 33, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "uninterpreted_option", "number": 999, "type": 11, "label": 3, "typeName": ".google.protobuf.UninterpretedOption" }], "extensionRange": [{ "start": 990, "end": 999 }, { "start": 1e3, "end": 536870912 }] }, { "name": "MethodOptions", "field": [{ "name": "deprecated", "number": 33, "type": 8, "label": 1, "defaultValue": "false" }, { "name": "idempotency_level", "number": 34, "type": 14, "label": 1, "typeName": ".google.protobuf.MethodOptions.IdempotencyLevel", "defaultValue": "IDEMPOTENCY_UNKNOWN" }, { "name": "features", "number": 35, "type": 11, "label": 1, "typeName": ".google.protobuf.FeatureSet" }, { "name": "uninterpreted_option", "number": 999, "type": 11, "label": 3, "typeName": ".google.protobuf.UninterpretedOption" }], "enumType": [{ "name": "IdempotencyLevel", "value": [{ "name": "IDEMPOTENCY_UNKNOWN", "number": 0 }, { "name": "NO_SIDE_EFFECTS", "number": 1 }, { "name": "IDEMPOTENT", "number": 2 }] }], "extensionRange": [{ "start": 990, "end": 999 }, { "start": 1e3, "end": 536870912 }] }, { "name": "UninterpretedOption", "field": [{ "name": "name", "number": 2, "type": 11, "label": 3, "typeName": ".google.protobuf.UninterpretedOption.NamePart" }, { "name": "identifier_value", "number": 3, "type": 9, "label": 1 }, { "name": "positive_int_value", "number": 4, "type": 4, "label": 1 }, { "name": "negative_int_value", "number": 5, "type": 3, "label": 1 }, { "name": "double_value", "number": 6, "type": 1, "label": 1 }, { "name": "string_value", "number": 7, "type": 12, "label": 1 }, { "name": "aggregate_value", "number": 8, "type": 9, "label": 1 }], "nestedType": [{ "name": "NamePart", "field": [{ "name": "name_part", "number": 1, "type": 9, "label": 2 }, { "name": "is_extension", "number": 2, "type": 8, "label": 2 }] }] }, { "name": "FeatureSet", "field": [{ "name": "field_presence", "number": 1, "type": 14, "label": 1, "typeName": ".google.protobuf.FeatureSet.FieldPresence", "options": { "retention": 1, "targets": [4, 1], "editionDefaults": [{ "value": "EXPLICIT", "edition": 900 }, { "value": "IMPLICIT", "edition": 999 }, { "value": "EXPLICIT", "edition": 1e3 }] } }, { "name": "enum_type", "number": 2, "type": 14, "label": 1, "typeName": ".google.protobuf.FeatureSet.EnumType", "options": { "retention": 1, "targets": [6, 1], "editionDefaults": [{ "value": "CLOSED", "edition": 900 }, { "value": "OPEN", "edition": 999 }] } }, { "name": "repeated_field_encoding", "number": 3, "type": 14, "label": 1, "typeName": ".google.protobuf.FeatureSet.RepeatedFieldEncoding", "options": { "retention": 1, "targets": [4, 1], "editionDefaults": [{ "value": "EXPANDED", "edition": 900 }, { "value": "PACKED", "edition": 999 }] } }, { "name": "utf8_validation", "number": 4, "type": 14, "label": 1, "typeName": ".google.protobuf.FeatureSet.Utf8Validation", "options": { "retention": 1, "targets": [4, 1], "editionDefaults": [{ "value": "NONE", "edition": 900 }, { "value": "VERIFY", "edition": 999 }] } }, { "name": "message_encoding", "number": 5, "type": 14, "label": 1, "typeName": ".google.protobuf.FeatureSet.MessageEncoding", "options": { "retention": 1, "targets": [4, 1], "editionDefaults": [{ "value": "LENGTH_PREFIXED", "edition": 900 }] } }, { "name": "json_format", "number": 6, "type": 14, "label": 1, "typeName": ".google.protobuf.FeatureSet.JsonFormat", "options": { "retention": 1, "targets": [3, 6, 1], "editionDefaults": [{ "value": "LEGACY_BEST_EFFORT", "edition": 900 }, { "value": "ALLOW", "edition": 999 }] } }, { "name": "enforce_naming_style", "number": 7, "type": 14, "label": 1, "typeName": ".google.protobuf.FeatureSet.EnforceNamingStyle", "options": { "retention": 2, "targets": [1, 2, 3, 4, 5, 6, 7, 8, 9], "editionDefaults": [{ "value": "STYLE_LEGACY", "edition": 900 }, { "value": "STYLE2024", "edition": 1001 }, { "value": "STYLE2026", "edition": 1002 }] } }, { "name": "default_symbol_visibility", "number": 8, "type": 14, "label": 1, "typeName": ".google.protobuf.FeatureSet.VisibilityFeature.DefaultSymbolVisibility", "options": { "retention": 2, "targets": [1], "editionDefaults": [{ "value": "EXPORT_ALL", "edition": 900 }, { "value": "EXPORT_TOP_LEVEL", "edition": 1001 }, { "value": "STRICT", "edition": 1002 }] } }, { "name": "enforce_proto_limits", "number": 9, "type": 14, "label": 1, "typeName": ".google.protobuf.FeatureSet.ProtoLimitsFeature.EnforceProtoLimits", "options": { "retention": 2, "targets": [6, 3, 4, 5], "editionDefaults": [{ "value": "LEGACY_NO_EXPLICIT_LIMITS", "edition": 900 }, { "value": "PROTO_LIMITS2026", "edition": 1002 }] } }], "nestedType": [{ "name": "VisibilityFeature", "enumType": [{ "name": "DefaultSymbolVisibility", "value": [{ "name": "DEFAULT_SYMBOL_VISIBILITY_UNKNOWN", "number": 0 }, { "name": "EXPORT_ALL", "number": 1 }, { "name": "EXPORT_TOP_LEVEL", "number": 2 }, { "name": "LOCAL_ALL", "number": 3 }, { "name": "STRICT", "number": 4 }] }] }, { "name": "ProtoLimitsFeature", "enumType": [{ "name": "EnforceProtoLimits", "value": [{ "name": "PROTO_LIMITS_UNKNOWN", "number": 0 }, { "name": "LEGACY_NO_EXPLICIT_LIMITS", "number": 1 }, { "name": "PROTO_LIMITS2026", "number": 2 }] }] }], "enumType": [{ "name": "FieldPresence", "value": [{ "name": "FIELD_PRESENCE_UNKNOWN", "number": 0 }, { "name": "EXPLICIT", "number": 1 }, { "name": "IMPLICIT", "number": 2 }, { "name": "LEGACY_REQUIRED", "number": 3 }] }, { "name": "EnumType", "value": [{ "name": "ENUM_TYPE_UNKNOWN", "number": 0 }, { "name": "OPEN", "number": 1 }, { "name": "CLOSED", "number": 2 }] }, { "name": "RepeatedFieldEncoding", "value": [{ "name": "REPEATED_FIELD_ENCODING_UNKNOWN", "number": 0 }, { "name": "PACKED", "number": 1 }, { "name": "EXPANDED", "number": 2 }] }, { "name": "Utf8Validation", "value": [{ "name": "UTF8_VALIDATION_UNKNOWN", "number": 0 }, { "name": "VERIFY", "number": 2 }, { "name": "NONE", "number": 3 }] }, { "name": "MessageEncoding", "value": [{ "name": "MESSAGE_ENCODING_UNKNOWN", "number": 0 }, { "name": "LENGTH_PREFIXED", "number": 1 }, { "name": "DELIMITED", "number": 2 }] }, { "name": "JsonFormat", "value": [{ "name": "JSON_FORMAT_UNKNOWN", "number": 0 }, { "name": "ALLOW", "number": 1 }, { "name": "LEGACY_BEST_EFFORT", "number": 2 }] }, { "name": "EnforceNamingStyle", "value": [{ "name": "ENFORCE_NAMING_STYLE_UNKNOWN", "number": 0 }, { "name": "STYLE2024", "number": 1 }, { "name": "STYLE_LEGACY", "number": 2 }, { "name": "STYLE2026", "number": 3 }] }], "extensionRange": [{ "start": 1e3, "end": 9995 }, { "start": 9995, "end": 1e4 }, { "start": 1e4, "end": 10001 }] }, { "name": "FeatureSetDefaults", "field": [{ "name": "defaults", "number": 1, "type": 11, "label": 3, "typeName": ".google.protobuf.FeatureSetDefaults.FeatureSetEditionDefault" }, { "name": "minimum_edition", "number": 4, "type": 14, "label": 1, "typeName": ".google.protobuf.Edition" }, { "name": "maximum_edition", "number": 5, "type": 14, "label": 1, "typeName": ".google.protobuf.Edition" }], "nestedType": [{ "name": "FeatureSetEditionDefault", "field": [{ "name": "edition", "number": 3, "type": 14, "label": 1, "typeName": ".google.protobuf.Edition" }, { "name": "overridable_features", "number": 4, "type": 11, "label": 1, "typeName": ".google.protobuf.FeatureSet" }, { "name": "fixed_features", "number": 5, "type": 11, "label": 1, "typeName": ".google.protobuf.FeatureSet" }] }] }, { "name": "SourceCodeInfo", "field": [{ "name": "location", "number": 1, "type": 11, "label": 3, "typeName": ".google.protobuf.SourceCodeInfo.Location" }], "nestedType": [{ "name": "Location", "field": [{ "name": "path", "number": 1, "type": 5, "label": 3, "options": { "packed": true } }, { "name": "span", "number": 2, "type": 5, "label": 3, "options": { "packed": true } }, { "name": "leading_comments", "number": 3, "type": 9, "label": 1 }, { "name": "trailing_comments", "number": 4, "type": 9, "label": 1 }, { "name": "leading_detached_comments", "number": 6, "type": 9, "label": 3 }] }], "extensionRange": [{ "start": 536e6, "end": 536000001 }] }, { "name": "GeneratedCodeInfo", "field": [{ "name": "annotation", "number": 1, "type": 11, "label": 3, "typeName": ".google.protobuf.GeneratedCodeInfo.Annotation" }], "nestedType": [{ "name": "Annotation", "field": [{ "name": "path", "number": 1, "type": 5, "label": 3, "options": { "packed": true } }, { "name": "source_file", "number": 2, "type": 9, "label": 1 }, { "name": "begin", "number": 3, "type": 5, "label": 1 }, { "name": "end", "number": 4, "type": 5, "label": 1 }, { "name": "semantic", "number": 5, "type": 14, "label": 1, "typeName": ".google.protobuf.GeneratedCodeInfo.Annotation.Semantic" }], "enumType": [{ "name": "Semantic", "value": [{ "name": "NONE", "number": 0 }, { "name": "SET", "number": 1 }, { "name": "ALIAS", "number": 2 }] }] }] }], "enumType": [{ "name": "Edition", "value": [{ "name": "EDITION_UNKNOWN", "number": 0 }, { "name": "EDITION_LEGACY", "number": 900 }, { "name": "EDITION_PROTO2", "number": 998 }, { "name": "EDITION_PROTO3", "number": 999 }, { "name": "EDITION_2023", "number": 1e3 }, { "name": "EDITION_2024", "number": 1001 }, { "name": "EDITION_2026", "number": 1002 }, { "name": "EDITION_UNSTABLE", "number": 9999 }, { "name": "EDITION_1_TEST_ONLY", "number": 1 }, { "name": "EDITION_2_TEST_ONLY", "number": 2 }, { "name": "EDITION_99997_TEST_ONLY", "number": 99997 }, { "name": "EDITION_99998_TEST_ONLY", "number": 99998 }, { "name": "EDITION_99999_TEST_ONLY", "number": 99999 }, { "name": "EDITION_MAX", "number": 2147483647 }] }, { "name": "SymbolVisibility", "value": [{ "name": "VISIBILITY_UNSET", "number": 0 }, { "name": "VISIBILITY_LOCAL", "number": 1 }, { "name": "VISIBILITY_EXPORT", "number": 2 }] }] });
var FileDescriptorProtoSchema = /* @__PURE__ */ messageDesc(file_google_protobuf_descriptor, 1);
var ExtensionRangeOptions_VerificationState;
(function(ExtensionRangeOptions_VerificationState2) {
  ExtensionRangeOptions_VerificationState2[ExtensionRangeOptions_VerificationState2["DECLARATION"] = 0] = "DECLARATION";
  ExtensionRangeOptions_VerificationState2[ExtensionRangeOptions_VerificationState2["UNVERIFIED"] = 1] = "UNVERIFIED";
})(ExtensionRangeOptions_VerificationState || (ExtensionRangeOptions_VerificationState = {}));
var FieldDescriptorProto_Type;
(function(FieldDescriptorProto_Type2) {
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["DOUBLE"] = 1] = "DOUBLE";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["FLOAT"] = 2] = "FLOAT";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["INT64"] = 3] = "INT64";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["UINT64"] = 4] = "UINT64";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["INT32"] = 5] = "INT32";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["FIXED64"] = 6] = "FIXED64";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["FIXED32"] = 7] = "FIXED32";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["BOOL"] = 8] = "BOOL";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["STRING"] = 9] = "STRING";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["GROUP"] = 10] = "GROUP";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["MESSAGE"] = 11] = "MESSAGE";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["BYTES"] = 12] = "BYTES";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["UINT32"] = 13] = "UINT32";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["ENUM"] = 14] = "ENUM";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["SFIXED32"] = 15] = "SFIXED32";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["SFIXED64"] = 16] = "SFIXED64";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["SINT32"] = 17] = "SINT32";
  FieldDescriptorProto_Type2[FieldDescriptorProto_Type2["SINT64"] = 18] = "SINT64";
})(FieldDescriptorProto_Type || (FieldDescriptorProto_Type = {}));
var FieldDescriptorProto_Label;
(function(FieldDescriptorProto_Label2) {
  FieldDescriptorProto_Label2[FieldDescriptorProto_Label2["OPTIONAL"] = 1] = "OPTIONAL";
  FieldDescriptorProto_Label2[FieldDescriptorProto_Label2["REPEATED"] = 3] = "REPEATED";
  FieldDescriptorProto_Label2[FieldDescriptorProto_Label2["REQUIRED"] = 2] = "REQUIRED";
})(FieldDescriptorProto_Label || (FieldDescriptorProto_Label = {}));
var FileOptions_OptimizeMode;
(function(FileOptions_OptimizeMode2) {
  FileOptions_OptimizeMode2[FileOptions_OptimizeMode2["SPEED"] = 1] = "SPEED";
  FileOptions_OptimizeMode2[FileOptions_OptimizeMode2["CODE_SIZE"] = 2] = "CODE_SIZE";
  FileOptions_OptimizeMode2[FileOptions_OptimizeMode2["LITE_RUNTIME"] = 3] = "LITE_RUNTIME";
})(FileOptions_OptimizeMode || (FileOptions_OptimizeMode = {}));
var FieldOptions_CType;
(function(FieldOptions_CType2) {
  FieldOptions_CType2[FieldOptions_CType2["STRING"] = 0] = "STRING";
  FieldOptions_CType2[FieldOptions_CType2["CORD"] = 1] = "CORD";
  FieldOptions_CType2[FieldOptions_CType2["STRING_PIECE"] = 2] = "STRING_PIECE";
})(FieldOptions_CType || (FieldOptions_CType = {}));
var FieldOptions_JSType;
(function(FieldOptions_JSType2) {
  FieldOptions_JSType2[FieldOptions_JSType2["JS_NORMAL"] = 0] = "JS_NORMAL";
  FieldOptions_JSType2[FieldOptions_JSType2["JS_STRING"] = 1] = "JS_STRING";
  FieldOptions_JSType2[FieldOptions_JSType2["JS_NUMBER"] = 2] = "JS_NUMBER";
})(FieldOptions_JSType || (FieldOptions_JSType = {}));
var FieldOptions_OptionRetention;
(function(FieldOptions_OptionRetention2) {
  FieldOptions_OptionRetention2[FieldOptions_OptionRetention2["RETENTION_UNKNOWN"] = 0] = "RETENTION_UNKNOWN";
  FieldOptions_OptionRetention2[FieldOptions_OptionRetention2["RETENTION_RUNTIME"] = 1] = "RETENTION_RUNTIME";
  FieldOptions_OptionRetention2[FieldOptions_OptionRetention2["RETENTION_SOURCE"] = 2] = "RETENTION_SOURCE";
})(FieldOptions_OptionRetention || (FieldOptions_OptionRetention = {}));
var FieldOptions_OptionTargetType;
(function(FieldOptions_OptionTargetType2) {
  FieldOptions_OptionTargetType2[FieldOptions_OptionTargetType2["TARGET_TYPE_UNKNOWN"] = 0] = "TARGET_TYPE_UNKNOWN";
  FieldOptions_OptionTargetType2[FieldOptions_OptionTargetType2["TARGET_TYPE_FILE"] = 1] = "TARGET_TYPE_FILE";
  FieldOptions_OptionTargetType2[FieldOptions_OptionTargetType2["TARGET_TYPE_EXTENSION_RANGE"] = 2] = "TARGET_TYPE_EXTENSION_RANGE";
  FieldOptions_OptionTargetType2[FieldOptions_OptionTargetType2["TARGET_TYPE_MESSAGE"] = 3] = "TARGET_TYPE_MESSAGE";
  FieldOptions_OptionTargetType2[FieldOptions_OptionTargetType2["TARGET_TYPE_FIELD"] = 4] = "TARGET_TYPE_FIELD";
  FieldOptions_OptionTargetType2[FieldOptions_OptionTargetType2["TARGET_TYPE_ONEOF"] = 5] = "TARGET_TYPE_ONEOF";
  FieldOptions_OptionTargetType2[FieldOptions_OptionTargetType2["TARGET_TYPE_ENUM"] = 6] = "TARGET_TYPE_ENUM";
  FieldOptions_OptionTargetType2[FieldOptions_OptionTargetType2["TARGET_TYPE_ENUM_ENTRY"] = 7] = "TARGET_TYPE_ENUM_ENTRY";
  FieldOptions_OptionTargetType2[FieldOptions_OptionTargetType2["TARGET_TYPE_SERVICE"] = 8] = "TARGET_TYPE_SERVICE";
  FieldOptions_OptionTargetType2[FieldOptions_OptionTargetType2["TARGET_TYPE_METHOD"] = 9] = "TARGET_TYPE_METHOD";
})(FieldOptions_OptionTargetType || (FieldOptions_OptionTargetType = {}));
var MethodOptions_IdempotencyLevel;
(function(MethodOptions_IdempotencyLevel2) {
  MethodOptions_IdempotencyLevel2[MethodOptions_IdempotencyLevel2["IDEMPOTENCY_UNKNOWN"] = 0] = "IDEMPOTENCY_UNKNOWN";
  MethodOptions_IdempotencyLevel2[MethodOptions_IdempotencyLevel2["NO_SIDE_EFFECTS"] = 1] = "NO_SIDE_EFFECTS";
  MethodOptions_IdempotencyLevel2[MethodOptions_IdempotencyLevel2["IDEMPOTENT"] = 2] = "IDEMPOTENT";
})(MethodOptions_IdempotencyLevel || (MethodOptions_IdempotencyLevel = {}));
var FeatureSet_VisibilityFeature_DefaultSymbolVisibility;
(function(FeatureSet_VisibilityFeature_DefaultSymbolVisibility2) {
  FeatureSet_VisibilityFeature_DefaultSymbolVisibility2[FeatureSet_VisibilityFeature_DefaultSymbolVisibility2["DEFAULT_SYMBOL_VISIBILITY_UNKNOWN"] = 0] = "DEFAULT_SYMBOL_VISIBILITY_UNKNOWN";
  FeatureSet_VisibilityFeature_DefaultSymbolVisibility2[FeatureSet_VisibilityFeature_DefaultSymbolVisibility2["EXPORT_ALL"] = 1] = "EXPORT_ALL";
  FeatureSet_VisibilityFeature_DefaultSymbolVisibility2[FeatureSet_VisibilityFeature_DefaultSymbolVisibility2["EXPORT_TOP_LEVEL"] = 2] = "EXPORT_TOP_LEVEL";
  FeatureSet_VisibilityFeature_DefaultSymbolVisibility2[FeatureSet_VisibilityFeature_DefaultSymbolVisibility2["LOCAL_ALL"] = 3] = "LOCAL_ALL";
  FeatureSet_VisibilityFeature_DefaultSymbolVisibility2[FeatureSet_VisibilityFeature_DefaultSymbolVisibility2["STRICT"] = 4] = "STRICT";
})(FeatureSet_VisibilityFeature_DefaultSymbolVisibility || (FeatureSet_VisibilityFeature_DefaultSymbolVisibility = {}));
var FeatureSet_ProtoLimitsFeature_EnforceProtoLimits;
(function(FeatureSet_ProtoLimitsFeature_EnforceProtoLimits2) {
  FeatureSet_ProtoLimitsFeature_EnforceProtoLimits2[FeatureSet_ProtoLimitsFeature_EnforceProtoLimits2["PROTO_LIMITS_UNKNOWN"] = 0] = "PROTO_LIMITS_UNKNOWN";
  FeatureSet_ProtoLimitsFeature_EnforceProtoLimits2[FeatureSet_ProtoLimitsFeature_EnforceProtoLimits2["LEGACY_NO_EXPLICIT_LIMITS"] = 1] = "LEGACY_NO_EXPLICIT_LIMITS";
  FeatureSet_ProtoLimitsFeature_EnforceProtoLimits2[FeatureSet_ProtoLimitsFeature_EnforceProtoLimits2["PROTO_LIMITS2026"] = 2] = "PROTO_LIMITS2026";
})(FeatureSet_ProtoLimitsFeature_EnforceProtoLimits || (FeatureSet_ProtoLimitsFeature_EnforceProtoLimits = {}));
var FeatureSet_FieldPresence;
(function(FeatureSet_FieldPresence2) {
  FeatureSet_FieldPresence2[FeatureSet_FieldPresence2["FIELD_PRESENCE_UNKNOWN"] = 0] = "FIELD_PRESENCE_UNKNOWN";
  FeatureSet_FieldPresence2[FeatureSet_FieldPresence2["EXPLICIT"] = 1] = "EXPLICIT";
  FeatureSet_FieldPresence2[FeatureSet_FieldPresence2["IMPLICIT"] = 2] = "IMPLICIT";
  FeatureSet_FieldPresence2[FeatureSet_FieldPresence2["LEGACY_REQUIRED"] = 3] = "LEGACY_REQUIRED";
})(FeatureSet_FieldPresence || (FeatureSet_FieldPresence = {}));
var FeatureSet_EnumType;
(function(FeatureSet_EnumType2) {
  FeatureSet_EnumType2[FeatureSet_EnumType2["ENUM_TYPE_UNKNOWN"] = 0] = "ENUM_TYPE_UNKNOWN";
  FeatureSet_EnumType2[FeatureSet_EnumType2["OPEN"] = 1] = "OPEN";
  FeatureSet_EnumType2[FeatureSet_EnumType2["CLOSED"] = 2] = "CLOSED";
})(FeatureSet_EnumType || (FeatureSet_EnumType = {}));
var FeatureSet_RepeatedFieldEncoding;
(function(FeatureSet_RepeatedFieldEncoding2) {
  FeatureSet_RepeatedFieldEncoding2[FeatureSet_RepeatedFieldEncoding2["REPEATED_FIELD_ENCODING_UNKNOWN"] = 0] = "REPEATED_FIELD_ENCODING_UNKNOWN";
  FeatureSet_RepeatedFieldEncoding2[FeatureSet_RepeatedFieldEncoding2["PACKED"] = 1] = "PACKED";
  FeatureSet_RepeatedFieldEncoding2[FeatureSet_RepeatedFieldEncoding2["EXPANDED"] = 2] = "EXPANDED";
})(FeatureSet_RepeatedFieldEncoding || (FeatureSet_RepeatedFieldEncoding = {}));
var FeatureSet_Utf8Validation;
(function(FeatureSet_Utf8Validation2) {
  FeatureSet_Utf8Validation2[FeatureSet_Utf8Validation2["UTF8_VALIDATION_UNKNOWN"] = 0] = "UTF8_VALIDATION_UNKNOWN";
  FeatureSet_Utf8Validation2[FeatureSet_Utf8Validation2["VERIFY"] = 2] = "VERIFY";
  FeatureSet_Utf8Validation2[FeatureSet_Utf8Validation2["NONE"] = 3] = "NONE";
})(FeatureSet_Utf8Validation || (FeatureSet_Utf8Validation = {}));
var FeatureSet_MessageEncoding;
(function(FeatureSet_MessageEncoding2) {
  FeatureSet_MessageEncoding2[FeatureSet_MessageEncoding2["MESSAGE_ENCODING_UNKNOWN"] = 0] = "MESSAGE_ENCODING_UNKNOWN";
  FeatureSet_MessageEncoding2[FeatureSet_MessageEncoding2["LENGTH_PREFIXED"] = 1] = "LENGTH_PREFIXED";
  FeatureSet_MessageEncoding2[FeatureSet_MessageEncoding2["DELIMITED"] = 2] = "DELIMITED";
})(FeatureSet_MessageEncoding || (FeatureSet_MessageEncoding = {}));
var FeatureSet_JsonFormat;
(function(FeatureSet_JsonFormat2) {
  FeatureSet_JsonFormat2[FeatureSet_JsonFormat2["JSON_FORMAT_UNKNOWN"] = 0] = "JSON_FORMAT_UNKNOWN";
  FeatureSet_JsonFormat2[FeatureSet_JsonFormat2["ALLOW"] = 1] = "ALLOW";
  FeatureSet_JsonFormat2[FeatureSet_JsonFormat2["LEGACY_BEST_EFFORT"] = 2] = "LEGACY_BEST_EFFORT";
})(FeatureSet_JsonFormat || (FeatureSet_JsonFormat = {}));
var FeatureSet_EnforceNamingStyle;
(function(FeatureSet_EnforceNamingStyle2) {
  FeatureSet_EnforceNamingStyle2[FeatureSet_EnforceNamingStyle2["ENFORCE_NAMING_STYLE_UNKNOWN"] = 0] = "ENFORCE_NAMING_STYLE_UNKNOWN";
  FeatureSet_EnforceNamingStyle2[FeatureSet_EnforceNamingStyle2["STYLE2024"] = 1] = "STYLE2024";
  FeatureSet_EnforceNamingStyle2[FeatureSet_EnforceNamingStyle2["STYLE_LEGACY"] = 2] = "STYLE_LEGACY";
  FeatureSet_EnforceNamingStyle2[FeatureSet_EnforceNamingStyle2["STYLE2026"] = 3] = "STYLE2026";
})(FeatureSet_EnforceNamingStyle || (FeatureSet_EnforceNamingStyle = {}));
var GeneratedCodeInfo_Annotation_Semantic;
(function(GeneratedCodeInfo_Annotation_Semantic2) {
  GeneratedCodeInfo_Annotation_Semantic2[GeneratedCodeInfo_Annotation_Semantic2["NONE"] = 0] = "NONE";
  GeneratedCodeInfo_Annotation_Semantic2[GeneratedCodeInfo_Annotation_Semantic2["SET"] = 1] = "SET";
  GeneratedCodeInfo_Annotation_Semantic2[GeneratedCodeInfo_Annotation_Semantic2["ALIAS"] = 2] = "ALIAS";
})(GeneratedCodeInfo_Annotation_Semantic || (GeneratedCodeInfo_Annotation_Semantic = {}));
var Edition;
(function(Edition2) {
  Edition2[Edition2["EDITION_UNKNOWN"] = 0] = "EDITION_UNKNOWN";
  Edition2[Edition2["EDITION_LEGACY"] = 900] = "EDITION_LEGACY";
  Edition2[Edition2["EDITION_PROTO2"] = 998] = "EDITION_PROTO2";
  Edition2[Edition2["EDITION_PROTO3"] = 999] = "EDITION_PROTO3";
  Edition2[Edition2["EDITION_2023"] = 1e3] = "EDITION_2023";
  Edition2[Edition2["EDITION_2024"] = 1001] = "EDITION_2024";
  Edition2[Edition2["EDITION_2026"] = 1002] = "EDITION_2026";
  Edition2[Edition2["EDITION_UNSTABLE"] = 9999] = "EDITION_UNSTABLE";
  Edition2[Edition2["EDITION_1_TEST_ONLY"] = 1] = "EDITION_1_TEST_ONLY";
  Edition2[Edition2["EDITION_2_TEST_ONLY"] = 2] = "EDITION_2_TEST_ONLY";
  Edition2[Edition2["EDITION_99997_TEST_ONLY"] = 99997] = "EDITION_99997_TEST_ONLY";
  Edition2[Edition2["EDITION_99998_TEST_ONLY"] = 99998] = "EDITION_99998_TEST_ONLY";
  Edition2[Edition2["EDITION_99999_TEST_ONLY"] = 99999] = "EDITION_99999_TEST_ONLY";
  Edition2[Edition2["EDITION_MAX"] = 2147483647] = "EDITION_MAX";
})(Edition || (Edition = {}));
var SymbolVisibility;
(function(SymbolVisibility2) {
  SymbolVisibility2[SymbolVisibility2["VISIBILITY_UNSET"] = 0] = "VISIBILITY_UNSET";
  SymbolVisibility2[SymbolVisibility2["VISIBILITY_LOCAL"] = 1] = "VISIBILITY_LOCAL";
  SymbolVisibility2[SymbolVisibility2["VISIBILITY_EXPORT"] = 2] = "VISIBILITY_EXPORT";
})(SymbolVisibility || (SymbolVisibility = {}));

// node_modules/@bufbuild/protobuf/dist/esm/from-binary.js
function makeReadContext(options) {
  return Object.assign(Object.assign({ readUnknownFields: true, recursionLimit: 100 }, options), { depth: 0 });
}
function fromBinary(schema, bytes, options) {
  const message2 = create(schema);
  compiledReader(schema).read(message2, new BinaryReader(bytes), makeReadContext(options), bytes.byteLength);
  return message2;
}
var compiledReaders = /* @__PURE__ */ new WeakMap();
function compiledReader(desc) {
  let compiled = compiledReaders.get(desc);
  if (compiled === void 0) {
    compiled = compileMessage(desc);
  }
  return compiled;
}
function compileMessage(desc) {
  const descString = String(desc);
  const fieldReaders = /* @__PURE__ */ new Map();
  const compiled = {
    read: compileMessageReader(descString, fieldReaders),
    readGroup: compileGroupReader(descString, fieldReaders)
  };
  compiledReaders.set(desc, compiled);
  for (const field of desc.fields) {
    fieldReaders.set(field.number, compileFieldReader(field));
  }
  return compiled;
}
function compileMessageReader(descString, fieldReaders) {
  return (message2, reader, ctx, length) => {
    var _a;
    if (++ctx.depth > ctx.recursionLimit) {
      throw new Error(`cannot decode ${descString} from binary: maximum recursion depth of ${ctx.recursionLimit} reached`);
    }
    const end = reader.pos + length;
    const unknownFields = (_a = message2.$unknown) !== null && _a !== void 0 ? _a : [];
    while (reader.pos < end) {
      const [fieldNo, wireType] = reader.tag();
      const fieldReader = fieldReaders.get(fieldNo);
      if (fieldReader === void 0) {
        const data = reader.skip(wireType, fieldNo, ctx.recursionLimit - ctx.depth);
        if (ctx.readUnknownFields) {
          unknownFields.push({ no: fieldNo, wireType, data });
        }
        continue;
      }
      fieldReader(message2, reader, ctx, wireType);
    }
    if (unknownFields.length > 0) {
      message2.$unknown = unknownFields;
    }
    ctx.depth--;
  };
}
function compileGroupReader(descString, fieldReaders) {
  return (message2, reader, ctx, fieldNo) => {
    var _a;
    if (++ctx.depth > ctx.recursionLimit) {
      throw new Error(`cannot decode ${descString} from binary: maximum recursion depth of ${ctx.recursionLimit} reached`);
    }
    let recordFieldNo;
    let wireType;
    const unknownFields = (_a = message2.$unknown) !== null && _a !== void 0 ? _a : [];
    while (reader.pos < reader.len) {
      [recordFieldNo, wireType] = reader.tag();
      if (wireType == WireType.EndGroup) {
        break;
      }
      const fieldReader = fieldReaders.get(recordFieldNo);
      if (fieldReader === void 0) {
        const data = reader.skip(wireType, recordFieldNo, ctx.recursionLimit - ctx.depth);
        if (ctx.readUnknownFields) {
          unknownFields.push({ no: recordFieldNo, wireType, data });
        }
        continue;
      }
      fieldReader(message2, reader, ctx, wireType);
    }
    if (wireType != WireType.EndGroup || recordFieldNo !== fieldNo) {
      throw new Error("invalid end group tag");
    }
    if (unknownFields.length > 0) {
      message2.$unknown = unknownFields;
    }
    ctx.depth--;
  };
}
function readField(message2, reader, field, wireType, ctx) {
  compileFieldReader(field)(message2[unsafeLocal], reader, ctx, wireType);
}
function compileFieldReader(field) {
  switch (field.fieldKind) {
    case "scalar":
      return compileScalarFieldReader(field);
    case "enum":
      return compileEnumFieldReader(field);
    case "message":
      return compileMessageFieldReader(field);
    case "list":
      return compileListFieldReader(field);
    case "map":
      return compileMapFieldReader(field);
  }
}
function compileScalarFieldReader(field) {
  const readScalar = compileScalarReader(field.scalar, field.utf8Validation, field.longAsString);
  const localName = field.localName;
  if (field.oneof) {
    const oneofLocalName = field.oneof.localName;
    return (message2, reader) => {
      message2[oneofLocalName] = {
        case: localName,
        value: readScalar(reader)
      };
    };
  }
  return (message2, reader) => {
    message2[localName] = readScalar(reader);
  };
}
function compileEnumFieldReader(field) {
  var _a;
  const localName = field.localName;
  const oneofLocalName = (_a = field.oneof) === null || _a === void 0 ? void 0 : _a.localName;
  if (field.enum.open) {
    if (oneofLocalName !== void 0) {
      return (message2, reader) => {
        message2[oneofLocalName] = { case: localName, value: reader.int32() };
      };
    }
    return (message2, reader) => {
      message2[localName] = reader.int32();
    };
  }
  const values = field.enum.values;
  const fieldNo = field.number;
  return (message2, reader, ctx, wireType) => {
    var _a2;
    const val = reader.int32();
    if (values.some((v) => v.number === val)) {
      if (oneofLocalName !== void 0) {
        message2[oneofLocalName] = { case: localName, value: val };
      } else {
        message2[localName] = val;
      }
    } else if (ctx.readUnknownFields) {
      const bytes = [];
      varint32write(val, bytes);
      const unknownFields = (_a2 = message2.$unknown) !== null && _a2 !== void 0 ? _a2 : [];
      unknownFields.push({
        no: fieldNo,
        wireType,
        data: new Uint8Array(bytes)
      });
      message2.$unknown = unknownFields;
    }
  };
}
function compileMessageFieldReader(field) {
  const localName = field.localName;
  const { toMessage, toLocal } = localMessageMapper(field);
  const readChild = compileChildReader(field);
  if (field.oneof) {
    const oneofLocalName = field.oneof.localName;
    return (message2, reader, ctx) => {
      const oneof = message2[oneofLocalName];
      const child = toMessage(oneof.case === localName ? oneof.value : void 0);
      readChild(child, reader, ctx);
      message2[oneofLocalName] = { case: localName, value: toLocal(child) };
    };
  }
  return (message2, reader, ctx) => {
    const child = toMessage(message2[localName]);
    readChild(child, reader, ctx);
    message2[localName] = toLocal(child);
  };
}
function compileChildReader(field) {
  const compiledChild = compiledReader(field.message);
  if (field.delimitedEncoding) {
    const fieldNo = field.number;
    return (child, reader, ctx) => compiledChild.readGroup(child, reader, ctx, fieldNo);
  }
  return (child, reader, ctx) => compiledChild.read(child, reader, ctx, reader.uint32());
}
function compileListFieldReader(field) {
  const localName = field.localName;
  if (field.listKind == "message") {
    const { toMessage, toLocal } = localMessageMapper(field);
    const readChild = compileChildReader(field);
    return (message2, reader, ctx) => {
      const child = toMessage(void 0);
      readChild(child, reader, ctx);
      message2[localName].push(toLocal(child));
    };
  }
  const scalarType = field.listKind == "enum" ? ScalarType.INT32 : field.scalar;
  const longAsString = field.listKind == "scalar" ? field.longAsString : false;
  const readScalar = compileScalarReader(scalarType, field.utf8Validation, longAsString);
  const packedPossible = scalarType != ScalarType.STRING && scalarType != ScalarType.BYTES;
  return (message2, reader, ctx, wireType) => {
    const items = message2[localName];
    if (wireType == WireType.LengthDelimited && packedPossible) {
      const end = reader.uint32() + reader.pos;
      while (reader.pos < end) {
        items.push(readScalar(reader));
      }
    } else {
      items.push(readScalar(reader));
    }
  };
}
function compileMapFieldReader(field) {
  const localName = field.localName;
  const readKey = compileScalarReader(field.mapKey, field.utf8Validation, false);
  const keyZero = scalarZeroValue(field.mapKey, false);
  let readValue;
  let valueDefault;
  switch (field.mapKind) {
    case "scalar": {
      const scalar = field.scalar;
      const readScalar = compileScalarReader(scalar, field.utf8Validation, false);
      readValue = (reader) => readScalar(reader);
      if (scalar == ScalarType.BYTES) {
        valueDefault = () => new Uint8Array(0);
      } else {
        const zero = scalarZeroValue(scalar, false);
        valueDefault = () => zero;
      }
      break;
    }
    case "enum": {
      const zero = field.enum.values[0].number;
      readValue = (reader) => reader.int32();
      valueDefault = () => zero;
      break;
    }
    case "message": {
      const { toMessage, toLocal } = localMessageMapper(field);
      const readChild = compiledReader(field.message).read;
      readValue = (reader, ctx, existing) => {
        const child = toMessage(existing);
        readChild(child, reader, ctx, reader.uint32());
        return toLocal(child);
      };
      valueDefault = () => toLocal(toMessage(void 0));
      break;
    }
  }
  return (message2, reader, ctx) => {
    const record = message2[localName];
    let key;
    let val;
    const len = reader.uint32();
    const end = reader.pos + len;
    while (reader.pos < end) {
      const [fieldNo, wireType] = reader.tag();
      switch (fieldNo) {
        case 1:
          key = readKey(reader);
          break;
        case 2:
          val = readValue(reader, ctx, val);
          break;
        default:
          reader.skip(wireType, fieldNo, ctx.recursionLimit - ctx.depth);
      }
    }
    if (key === void 0) {
      key = keyZero;
    }
    if (val === void 0) {
      val = valueDefault();
    }
    setOwn(record, key, val);
  };
}
function compileScalarReader(type, utf8Validation, longAsString) {
  switch (type) {
    case ScalarType.STRING:
      return (reader) => reader.string(utf8Validation);
    case ScalarType.BOOL:
      return (reader) => reader.bool();
    case ScalarType.DOUBLE:
      return (reader) => reader.double();
    case ScalarType.FLOAT:
      return (reader) => reader.float();
    case ScalarType.INT32:
      return (reader) => reader.int32();
    case ScalarType.INT64:
      if (longAsString) {
        return (reader) => String(reader.int64());
      }
      return (reader) => reader.int64();
    case ScalarType.UINT64:
      if (longAsString) {
        return (reader) => String(reader.uint64());
      }
      return (reader) => reader.uint64();
    case ScalarType.FIXED64:
      if (longAsString) {
        return (reader) => String(reader.fixed64());
      }
      return (reader) => reader.fixed64();
    case ScalarType.BYTES:
      return (reader) => reader.bytes();
    case ScalarType.FIXED32:
      return (reader) => reader.fixed32();
    case ScalarType.SFIXED32:
      return (reader) => reader.sfixed32();
    case ScalarType.SFIXED64:
      if (longAsString) {
        return (reader) => String(reader.sfixed64());
      }
      return (reader) => reader.sfixed64();
    case ScalarType.SINT64:
      if (longAsString) {
        return (reader) => String(reader.sint64());
      }
      return (reader) => reader.sint64();
    case ScalarType.UINT32:
      return (reader) => reader.uint32();
    case ScalarType.SINT32:
      return (reader) => reader.sint32();
  }
}

// node_modules/@bufbuild/protobuf/dist/esm/codegenv2/file.js
function fileDesc(b64, imports) {
  var _a;
  const root = fromBinary(FileDescriptorProtoSchema, base64Decode(b64));
  root.messageType.forEach(restoreJsonNames);
  root.dependency = (_a = imports === null || imports === void 0 ? void 0 : imports.map((f) => f.proto.name)) !== null && _a !== void 0 ? _a : [];
  const reg = createEmbeddedFileRegistry(root, (protoFileName) => imports === null || imports === void 0 ? void 0 : imports.find((f) => f.proto.name === protoFileName));
  return reg.getFile(root.name);
}

// node_modules/@bufbuild/protobuf/dist/esm/wkt/google/protobuf/any_pb.js
var file_google_protobuf_any = /* @__PURE__ */ fileDesc("Chlnb29nbGUvcHJvdG9idWYvYW55LnByb3RvEg9nb29nbGUucHJvdG9idWYiJgoDQW55EhAKCHR5cGVfdXJsGAEgASgJEg0KBXZhbHVlGAIgASgMQnYKE2NvbS5nb29nbGUucHJvdG9idWZCCEFueVByb3RvUAFaLGdvb2dsZS5nb2xhbmcub3JnL3Byb3RvYnVmL3R5cGVzL2tub3duL2FueXBiogIDR1BCqgIeR29vZ2xlLlByb3RvYnVmLldlbGxLbm93blR5cGVzYgZwcm90bzM");
var AnySchema = /* @__PURE__ */ messageDesc(file_google_protobuf_any, 0);

// node_modules/@bufbuild/protobuf/dist/esm/to-binary.js
var IMPLICIT4 = 2;
var LEGACY_REQUIRED2 = 3;
var writeDefaults = {
  writeUnknownFields: true
};
function makeWriteOptions(options) {
  return options ? Object.assign(Object.assign({}, writeDefaults), options) : writeDefaults;
}
function toBinary(schema, message2, options) {
  const writer = new BinaryWriter();
  compiledWriter(schema)(writer, makeWriteOptions(options), message2);
  return writer.finish();
}
var compiledWriters = /* @__PURE__ */ new WeakMap();
function compiledWriter(desc) {
  let compiled = compiledWriters.get(desc);
  if (compiled === void 0) {
    compiled = compileMessage2(desc);
  }
  return compiled;
}
function compileMessage2(desc) {
  const typeName = desc.typeName;
  const sortedFields = desc.fields.concat().sort((a, b) => a.number - b.number);
  const foreignField = sortedFields[0];
  const fieldWriters = [];
  const compiled = (writer, opts, message2) => {
    if (message2.$typeName !== typeName && foreignField !== void 0) {
      throw new FieldError(foreignField, `cannot use ${foreignField} with message ${message2.$typeName}`, "ForeignFieldError");
    }
    for (let i = 0; i < fieldWriters.length; i++) {
      fieldWriters[i](writer, opts, message2);
    }
    const unknown = message2.$unknown;
    if (unknown !== void 0 && opts.writeUnknownFields) {
      for (let i = 0; i < unknown.length; i++) {
        const { no, wireType, data } = unknown[i];
        writer.tag(no, wireType).raw(data);
      }
    }
  };
  compiledWriters.set(desc, compiled);
  for (const field of sortedFields) {
    fieldWriters.push(compileField(field));
  }
  return compiled;
}
function compileField(field) {
  switch (field.fieldKind) {
    case "message":
    case "scalar":
    case "enum":
      return compileSingularField(field);
    case "list":
      return compileListField(field);
    case "map":
      return compileMapField(field);
  }
}
function compileSingularField(field) {
  const writeValue = compileSingularValue(field);
  const localName = field.localName;
  if (field.oneof) {
    const oneofLocalName = field.oneof.localName;
    return (writer, opts, message2) => {
      const oneof = message2[oneofLocalName];
      if (oneof.case === localName) {
        writeValue(writer, opts, oneof.value);
      }
    };
  }
  if (field.presence != IMPLICIT4) {
    const requiredError = field.presence == LEGACY_REQUIRED2 ? `cannot encode ${field} to binary: required field not set` : void 0;
    return (writer, opts, message2) => {
      const value = message2[localName];
      if (value !== void 0 && Object.prototype.hasOwnProperty.call(message2, localName)) {
        writeValue(writer, opts, value);
      } else if (requiredError !== void 0) {
        throw new Error(requiredError);
      }
    };
  }
  if (field.fieldKind == "enum") {
    const zero = field.enum.values[0].number;
    return (writer, opts, message2) => {
      const value = message2[localName];
      if (value !== zero) {
        writeValue(writer, opts, value);
      }
    };
  }
  switch (field.scalar) {
    case ScalarType.BOOL:
      return (writer, opts, message2) => {
        const value = message2[localName];
        if (value !== false) {
          writeValue(writer, opts, value);
        }
      };
    case ScalarType.STRING:
      return (writer, opts, message2) => {
        const value = message2[localName];
        if (value !== "") {
          writeValue(writer, opts, value);
        }
      };
    case ScalarType.BYTES:
      return (writer, opts, message2) => {
        const value = message2[localName];
        if (!(value instanceof Uint8Array) || value.byteLength > 0) {
          writeValue(writer, opts, value);
        }
      };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return (writer, opts, message2) => {
        const value = message2[localName];
        if (!Object.is(value, 0)) {
          writeValue(writer, opts, value);
        }
      };
    default:
      return (writer, opts, message2) => {
        const value = message2[localName];
        if (value != 0) {
          writeValue(writer, opts, value);
        }
      };
  }
}
function compileSingularValue(field) {
  switch (field.fieldKind) {
    case "message": {
      const { toMessage } = localMessageMapper(field);
      const writeChild = compileChildWriter(field);
      return (writer, opts, value) => {
        writeChild(writer, opts, toMessage(value));
      };
    }
    case "scalar":
    case "enum": {
      const scalarType = field.fieldKind == "enum" ? ScalarType.INT32 : field.scalar;
      const fieldNo = field.number;
      const wireType = writeTypeOfScalar(scalarType);
      const writeScalar = compileScalarValue(scalarType, field.parent.typeName, field.name);
      return (writer, opts, value) => {
        writer.tag(fieldNo, wireType);
        writeScalar(writer, value);
      };
    }
  }
}
function compileListField(field) {
  const localName = field.localName;
  const fieldNo = field.number;
  switch (field.listKind) {
    case "message": {
      const { toMessage } = localMessageMapper(field);
      const writeChild = compileChildWriter(field);
      return (writer, opts, message2) => {
        const items = message2[localName];
        for (let i = 0; i < items.length; i++) {
          writeChild(writer, opts, toMessage(items[i]));
        }
      };
    }
    case "scalar":
    case "enum": {
      const scalarType = field.listKind == "enum" ? ScalarType.INT32 : field.scalar;
      const writeScalar = compileScalarValue(scalarType, field.parent.typeName, field.name);
      if (field.packed) {
        return (writer, opts, message2) => {
          const items = message2[localName];
          if (items.length == 0) {
            return;
          }
          writer.tag(fieldNo, WireType.LengthDelimited).fork();
          for (let i = 0; i < items.length; i++) {
            writeScalar(writer, items[i]);
          }
          writer.join();
        };
      }
      const wireType = writeTypeOfScalar(scalarType);
      return (writer, opts, message2) => {
        const items = message2[localName];
        for (let i = 0; i < items.length; i++) {
          writer.tag(fieldNo, wireType);
          writeScalar(writer, items[i]);
        }
      };
    }
  }
}
function compileMapField(field) {
  const localName = field.localName;
  const fieldNo = field.number;
  const writeKey = compileMapKey(field);
  if (field.mapKind == "message") {
    const { toMessage } = localMessageMapper(field);
    const writeMessage = compiledWriter(field.message);
    return (writer, opts, message2) => {
      const record = message2[localName];
      const keys = Object.keys(record);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        writer.tag(fieldNo, WireType.LengthDelimited).fork();
        writeKey(writer, key);
        writer.tag(2, WireType.LengthDelimited).fork();
        writeMessage(writer, opts, toMessage(record[key]));
        writer.join();
        writer.join();
      }
    };
  }
  const scalarType = field.mapKind == "enum" ? ScalarType.INT32 : field.scalar;
  const valueWireType = writeTypeOfScalar(scalarType);
  const writeScalar = compileScalarValue(scalarType, field.parent.typeName, field.name);
  return (writer, opts, message2) => {
    const record = message2[localName];
    const keys = Object.keys(record);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      writer.tag(fieldNo, WireType.LengthDelimited).fork();
      writeKey(writer, key);
      writer.tag(2, valueWireType);
      writeScalar(writer, record[key]);
      writer.join();
    }
  };
}
function compileMapKey(field) {
  const wireType = writeTypeOfScalar(field.mapKey);
  const writeScalar = compileScalarValue(field.mapKey, field.parent.typeName, field.name);
  const convertKey = compileMapKeyConverter(field.mapKey);
  return (writer, key) => {
    writer.tag(1, wireType);
    writeScalar(writer, convertKey(key));
  };
}
function compileMapKeyConverter(type) {
  switch (type) {
    case ScalarType.STRING:
      return (key) => key;
    case ScalarType.BOOL:
      return (key) => key === "true" ? true : key === "false" ? false : key;
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return (key) => {
        try {
          return protoInt64.uParse(key);
        } catch (_a) {
          return key;
        }
      };
    case ScalarType.INT64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return (key) => {
        try {
          return protoInt64.parse(key);
        } catch (_a) {
          return key;
        }
      };
    default:
      return (key) => {
        const n = Number.parseInt(key);
        return Number.isFinite(n) ? n : key;
      };
  }
}
function compileScalarValue(type, messageName, fieldName) {
  const writeScalar = compileScalarWrite(type);
  return (writer, value) => {
    try {
      writeScalar(writer, value);
    } catch (e) {
      if (e instanceof Error) {
        throw new Error(`cannot encode field ${messageName}.${fieldName} to binary: ${e.message}`);
      }
      throw e;
    }
  };
}
function compileScalarWrite(type) {
  switch (type) {
    case ScalarType.STRING:
      return (writer, value) => writer.string(value);
    case ScalarType.BOOL:
      return (writer, value) => writer.bool(value);
    case ScalarType.DOUBLE:
      return (writer, value) => writer.double(value);
    case ScalarType.FLOAT:
      return (writer, value) => writer.float(value);
    case ScalarType.INT32:
      return (writer, value) => writer.int32(value);
    case ScalarType.INT64:
      return (writer, value) => writer.int64(value);
    case ScalarType.UINT64:
      return (writer, value) => writer.uint64(value);
    case ScalarType.FIXED64:
      return (writer, value) => writer.fixed64(value);
    case ScalarType.BYTES:
      return (writer, value) => writer.bytes(value);
    case ScalarType.FIXED32:
      return (writer, value) => writer.fixed32(value);
    case ScalarType.SFIXED32:
      return (writer, value) => writer.sfixed32(value);
    case ScalarType.SFIXED64:
      return (writer, value) => writer.sfixed64(value);
    case ScalarType.SINT64:
      return (writer, value) => writer.sint64(value);
    case ScalarType.UINT32:
      return (writer, value) => writer.uint32(value);
    case ScalarType.SINT32:
      return (writer, value) => writer.sint32(value);
  }
}
function writeField(writer, opts, msg, field) {
  compileField(field)(writer, opts, msg[unsafeLocal]);
}
function compileChildWriter(field) {
  const fieldNo = field.number;
  const writeMessage = compiledWriter(field.message);
  if (field.delimitedEncoding) {
    return (writer, opts, child) => {
      writer.tag(fieldNo, WireType.StartGroup);
      writeMessage(writer, opts, child);
      writer.tag(fieldNo, WireType.EndGroup);
    };
  }
  return (writer, opts, child) => {
    writer.tag(fieldNo, WireType.LengthDelimited).fork();
    writeMessage(writer, opts, child);
    writer.join();
  };
}
function writeTypeOfScalar(type) {
  switch (type) {
    case ScalarType.BYTES:
    case ScalarType.STRING:
      return WireType.LengthDelimited;
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return WireType.Bit64;
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
    case ScalarType.FLOAT:
      return WireType.Bit32;
    default:
      return WireType.Varint;
  }
}

// node_modules/@bufbuild/protobuf/dist/esm/wkt/any.js
function anyPack(schema, message2, into) {
  let ret = false;
  if (!into) {
    into = create(AnySchema);
    ret = true;
  }
  into.value = toBinary(schema, message2);
  into.typeUrl = typeNameToUrl(message2.$typeName);
  return ret ? into : void 0;
}
function anyIs(any, descOrTypeName) {
  if (any.typeUrl === "") {
    return false;
  }
  const want = typeof descOrTypeName == "string" ? descOrTypeName : descOrTypeName.typeName;
  const got = typeUrlToName(any.typeUrl);
  return want === got;
}
function anyUnpack(any, registryOrMessageDesc) {
  if (any.typeUrl === "") {
    return void 0;
  }
  const desc = registryOrMessageDesc.kind == "message" ? registryOrMessageDesc : registryOrMessageDesc.getMessage(typeUrlToName(any.typeUrl));
  if (!desc || !anyIs(any, desc)) {
    return void 0;
  }
  return fromBinary(desc, any.value);
}
function typeNameToUrl(name) {
  return `type.googleapis.com/${name}`;
}
function typeUrlToName(url) {
  const slash = url.lastIndexOf("/");
  const name = slash >= 0 ? url.substring(slash + 1) : url;
  if (!name.length) {
    throw new Error(`invalid type url: ${url}`);
  }
  return name;
}

// node_modules/@bufbuild/protobuf/dist/esm/wkt/google/protobuf/struct_pb.js
var file_google_protobuf_struct = /* @__PURE__ */ fileDesc("Chxnb29nbGUvcHJvdG9idWYvc3RydWN0LnByb3RvEg9nb29nbGUucHJvdG9idWYihAEKBlN0cnVjdBIzCgZmaWVsZHMYASADKAsyIy5nb29nbGUucHJvdG9idWYuU3RydWN0LkZpZWxkc0VudHJ5GkUKC0ZpZWxkc0VudHJ5EgsKA2tleRgBIAEoCRIlCgV2YWx1ZRgCIAEoCzIWLmdvb2dsZS5wcm90b2J1Zi5WYWx1ZToCOAEi6gEKBVZhbHVlEjAKCm51bGxfdmFsdWUYASABKA4yGi5nb29nbGUucHJvdG9idWYuTnVsbFZhbHVlSAASFgoMbnVtYmVyX3ZhbHVlGAIgASgBSAASFgoMc3RyaW5nX3ZhbHVlGAMgASgJSAASFAoKYm9vbF92YWx1ZRgEIAEoCEgAEi8KDHN0cnVjdF92YWx1ZRgFIAEoCzIXLmdvb2dsZS5wcm90b2J1Zi5TdHJ1Y3RIABIwCgpsaXN0X3ZhbHVlGAYgASgLMhouZ29vZ2xlLnByb3RvYnVmLkxpc3RWYWx1ZUgAQgYKBGtpbmQiMwoJTGlzdFZhbHVlEiYKBnZhbHVlcxgBIAMoCzIWLmdvb2dsZS5wcm90b2J1Zi5WYWx1ZSobCglOdWxsVmFsdWUSDgoKTlVMTF9WQUxVRRAAQn8KE2NvbS5nb29nbGUucHJvdG9idWZCC1N0cnVjdFByb3RvUAFaL2dvb2dsZS5nb2xhbmcub3JnL3Byb3RvYnVmL3R5cGVzL2tub3duL3N0cnVjdHBi+AEBogIDR1BCqgIeR29vZ2xlLlByb3RvYnVmLldlbGxLbm93blR5cGVzYgZwcm90bzM");
var StructSchema = /* @__PURE__ */ messageDesc(file_google_protobuf_struct, 0);
var ValueSchema = /* @__PURE__ */ messageDesc(file_google_protobuf_struct, 1);
var ListValueSchema = /* @__PURE__ */ messageDesc(file_google_protobuf_struct, 2);
var NullValue;
(function(NullValue2) {
  NullValue2[NullValue2["NULL_VALUE"] = 0] = "NULL_VALUE";
})(NullValue || (NullValue = {}));

// node_modules/@bufbuild/protobuf/dist/esm/extensions.js
function getExtension(message2, extension, options) {
  assertExtendee(extension, message2);
  const ufs = filterUnknownFields(message2.$unknown, extension);
  const [container, field, get] = createExtensionContainer(extension);
  const ctx = makeReadContext(options);
  for (const uf of ufs) {
    readField(container, new BinaryReader(uf.data), field, uf.wireType, ctx);
  }
  return get();
}
function setExtension(message2, extension, value) {
  var _a;
  assertExtendee(extension, message2);
  const ufs = ((_a = message2.$unknown) !== null && _a !== void 0 ? _a : []).filter((uf) => uf.no !== extension.number);
  const [container, field] = createExtensionContainer(extension, value);
  const writer = new BinaryWriter();
  writeField(writer, { writeUnknownFields: true }, container, field);
  const reader = new BinaryReader(writer.finish());
  while (reader.pos < reader.len) {
    const [no, wireType] = reader.tag();
    const data = reader.skip(wireType, no);
    ufs.push({ no, wireType, data });
  }
  message2.$unknown = ufs;
}
function filterUnknownFields(unknownFields, extension) {
  if (unknownFields === void 0)
    return [];
  if (extension.fieldKind === "enum" || extension.fieldKind === "scalar") {
    for (let i = unknownFields.length - 1; i >= 0; --i) {
      if (unknownFields[i].no == extension.number) {
        return [unknownFields[i]];
      }
    }
    return [];
  }
  return unknownFields.filter((uf) => uf.no === extension.number);
}
function createExtensionContainer(extension, value) {
  const localName = extension.typeName;
  const field = Object.assign(Object.assign({}, extension), { kind: "field", parent: extension.extendee, localName });
  const desc = Object.assign(Object.assign({}, extension.extendee), { fields: [field], members: [field], oneofs: [] });
  const container = create(desc, value !== void 0 ? { [localName]: value } : void 0);
  return [
    reflect(desc, container),
    field,
    () => {
      const value2 = container[localName];
      if (value2 === void 0) {
        const desc2 = extension.message;
        if (isWrapperDesc(desc2)) {
          return scalarZeroValue(desc2.fields[0].scalar, desc2.fields[0].longAsString);
        }
        return create(desc2);
      }
      return value2;
    }
  ];
}
function assertExtendee(extension, message2) {
  if (extension.extendee.typeName != message2.$typeName) {
    throw new Error(`extension ${extension.typeName} can only be applied to message ${extension.extendee.typeName}`);
  }
}

// node_modules/@bufbuild/protobuf/dist/esm/wkt/json.js
var timestampMsMin = /* @__PURE__ */ Date.parse("0001-01-01T00:00:00Z");
var timestampMsMax = /* @__PURE__ */ Date.parse("9999-12-31T23:59:59Z");
var durationSecondsMin = -315576e6;
var durationSecondsMax = 315576e6;

// node_modules/@bufbuild/protobuf/dist/esm/to-json.js
var LEGACY_REQUIRED3 = 3;
var IMPLICIT5 = 2;
var jsonWriteDefaults = {
  alwaysEmitImplicit: false,
  enumAsInteger: false,
  useProtoFieldName: false
};
function makeWriteOptions2(options) {
  return options ? Object.assign(Object.assign({}, jsonWriteDefaults), options) : jsonWriteDefaults;
}
function toJson(schema, message2, options) {
  return compiledWriter2(schema)(makeWriteOptions2(options), message2);
}
function toJsonString(schema, message2, options) {
  var _a;
  const jsonValue = toJson(schema, message2, options);
  return JSON.stringify(jsonValue, null, (_a = options === null || options === void 0 ? void 0 : options.prettySpaces) !== null && _a !== void 0 ? _a : 0);
}
var compiledWriters2 = /* @__PURE__ */ new WeakMap();
function compiledWriter2(desc) {
  let compiled = compiledWriters2.get(desc);
  if (compiled === void 0) {
    compiled = compileMessage3(desc);
  }
  return compiled;
}
function compileMessage3(desc) {
  const typeName = desc.typeName;
  const writeWkt = compileWkt(desc);
  if (writeWkt !== void 0) {
    const foreignField2 = desc.fields[0];
    const compiledWriter4 = (opts, message2) => {
      if (message2.$typeName !== typeName && foreignField2 !== void 0) {
        throw new FieldError(foreignField2, `cannot use ${foreignField2} with message ${message2.$typeName}`, "ForeignFieldError");
      }
      return writeWkt(opts, message2);
    };
    compiledWriters2.set(desc, compiledWriter4);
    return compiledWriter4;
  }
  const sortedFields = desc.fields.concat().sort((a, b) => a.number - b.number);
  const foreignField = sortedFields[0];
  const fieldWriters = [];
  const compiledWriter3 = (opts, message2) => {
    if (message2.$typeName !== typeName && foreignField !== void 0) {
      throw new FieldError(foreignField, `cannot use ${foreignField} with message ${message2.$typeName}`, "ForeignFieldError");
    }
    const json = {};
    for (let i = 0; i < fieldWriters.length; i++) {
      fieldWriters[i](opts, message2, json);
    }
    if (opts.registry) {
      writeExtensions(json, opts, opts.registry, message2, desc);
    }
    return json;
  };
  compiledWriters2.set(desc, compiledWriter3);
  for (const field of sortedFields) {
    const writeField2 = compileField2(field);
    fieldWriters.push(field.jsonName === "__proto__" || field.name === "__proto__" ? writeOwnKeys(writeField2) : writeField2);
  }
  return compiledWriter3;
}
function writeOwnKeys(writeField2) {
  return (opts, message2, json) => {
    const tmp = /* @__PURE__ */ Object.create(null);
    writeField2(opts, message2, tmp);
    for (const key of Object.keys(tmp)) {
      setOwn(json, key, tmp[key]);
    }
  };
}
function compileWkt(desc) {
  if (!desc.typeName.startsWith("google.protobuf.")) {
    return void 0;
  }
  switch (desc.typeName) {
    case "google.protobuf.Any":
      return (opts, message2) => anyToJson(message2, opts);
    case "google.protobuf.Timestamp":
      return (opts, message2) => timestampToJson(message2);
    case "google.protobuf.Duration":
      return (opts, message2) => durationToJson(message2);
    case "google.protobuf.FieldMask":
      return (opts, message2) => fieldMaskToJson(message2);
    case "google.protobuf.Struct":
      return (opts, message2) => structToJson(message2);
    case "google.protobuf.Value":
      return (opts, message2) => valueToJson(message2);
    case "google.protobuf.ListValue":
      return (opts, message2) => listValueToJson(message2);
    default:
      if (isWrapperDesc(desc)) {
        const valueField = desc.fields[0];
        const localName = valueField.localName;
        const zero = scalarZeroValue(valueField.scalar, false);
        const writeScalar = compileScalarValue2(valueField);
        return (opts, message2) => {
          const value = message2[localName];
          return writeScalar(opts, value === void 0 ? zero : value);
        };
      }
      return void 0;
  }
}
function compileField2(field) {
  switch (field.fieldKind) {
    case "scalar":
    case "enum":
    case "message":
      return compileSingularField2(field);
    case "list":
    case "map": {
      const writeValue = field.fieldKind == "list" ? compileListValue(field) : compileMapValue(field);
      const protoName = field.name;
      const jsonKey = field.jsonName;
      const localName = field.localName;
      return (opts, message2, json) => {
        const value = writeValue(opts, message2[localName]);
        if (value !== void 0) {
          json[opts.useProtoFieldName ? protoName : jsonKey] = value;
        }
      };
    }
  }
}
function compileSingularField2(field) {
  const writeValue = compileSingularValue2(field);
  const protoName = field.name;
  const jsonKey = field.jsonName;
  const localName = field.localName;
  if (field.oneof) {
    const oneofLocalName = field.oneof.localName;
    return (opts, message2, json) => {
      const oneof = message2[oneofLocalName];
      if (oneof.case === localName) {
        json[opts.useProtoFieldName ? protoName : jsonKey] = writeValue(opts, oneof.value);
      }
    };
  }
  if (field.presence != IMPLICIT5) {
    const requiredError = field.presence == LEGACY_REQUIRED3 ? `cannot encode ${field} to JSON: required field not set` : void 0;
    return (opts, message2, json) => {
      const value = message2[localName];
      if (value !== void 0 && Object.prototype.hasOwnProperty.call(message2, localName)) {
        json[opts.useProtoFieldName ? protoName : jsonKey] = writeValue(opts, value);
      } else if (requiredError !== void 0) {
        throw new Error(requiredError);
      }
    };
  }
  if (field.fieldKind == "enum") {
    const zero = field.enum.values[0].number;
    return (opts, message2, json) => {
      const value = message2[localName];
      if (value !== zero || opts.alwaysEmitImplicit) {
        json[opts.useProtoFieldName ? protoName : jsonKey] = writeValue(opts, value);
      }
    };
  }
  switch (field.scalar) {
    case ScalarType.BOOL:
      return (opts, message2, json) => {
        const value = message2[localName];
        if (value !== false || opts.alwaysEmitImplicit) {
          json[opts.useProtoFieldName ? protoName : jsonKey] = writeValue(opts, value);
        }
      };
    case ScalarType.STRING:
      return (opts, message2, json) => {
        const value = message2[localName];
        if (value !== "" || opts.alwaysEmitImplicit) {
          json[opts.useProtoFieldName ? protoName : jsonKey] = writeValue(opts, value);
        }
      };
    case ScalarType.BYTES:
      return (opts, message2, json) => {
        const value = message2[localName];
        if (!(value instanceof Uint8Array) || value.byteLength > 0 || opts.alwaysEmitImplicit) {
          json[opts.useProtoFieldName ? protoName : jsonKey] = writeValue(opts, value);
        }
      };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return (opts, message2, json) => {
        const value = message2[localName];
        if (!Object.is(value, 0) || opts.alwaysEmitImplicit) {
          json[opts.useProtoFieldName ? protoName : jsonKey] = writeValue(opts, value);
        }
      };
    default:
      return (opts, message2, json) => {
        const value = message2[localName];
        if (value != 0 || opts.alwaysEmitImplicit) {
          json[opts.useProtoFieldName ? protoName : jsonKey] = writeValue(opts, value);
        }
      };
  }
}
function compileFieldValue(field) {
  switch (field.fieldKind) {
    case "scalar":
    case "enum":
    case "message":
      return compileSingularValue2(field);
    case "list":
      return compileListValue(field);
    case "map":
      return compileMapValue(field);
  }
}
function compileSingularValue2(field) {
  switch (field.fieldKind) {
    case "scalar":
      return compileScalarValue2(field);
    case "enum":
      return compileEnumValue(field);
    case "message":
      return compileMessageValue(field);
  }
}
function compileMessageValue(field) {
  const { toMessage } = localMessageMapper(field);
  const writeMessage = compiledWriter2(field.message);
  return (opts, value) => writeMessage(opts, toMessage(value));
}
function compileListValue(field) {
  const writeItem = compileListItemValue(field);
  return (opts, value) => {
    const items = value;
    if (items.length == 0 && !opts.alwaysEmitImplicit) {
      return void 0;
    }
    const jsonArray = [];
    for (let i = 0; i < items.length; i++) {
      jsonArray.push(writeItem(opts, items[i]));
    }
    return jsonArray;
  };
}
function compileListItemValue(field) {
  switch (field.listKind) {
    case "scalar":
      return compileScalarValue2(field);
    case "enum":
      return compileEnumValue(field);
    case "message":
      return compileMessageValue(field);
  }
}
function compileMapValue(field) {
  const writeMapValue = compileMapEntryValue(field);
  return (opts, value) => {
    const record = value;
    const keys = Object.keys(record);
    if (keys.length == 0 && !opts.alwaysEmitImplicit) {
      return void 0;
    }
    const jsonObject = {};
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      setOwn(jsonObject, key, writeMapValue(opts, record[key]));
    }
    return jsonObject;
  };
}
function compileMapEntryValue(field) {
  switch (field.mapKind) {
    case "scalar":
      return compileScalarValue2(field);
    case "enum":
      return compileEnumValue(field);
    case "message":
      return compileMessageValue(field);
  }
}
function compileEnumValue(field) {
  const desc = field.enum;
  if (desc.typeName == "google.protobuf.NullValue") {
    return (opts, value) => {
      if (typeof value != "number") {
        throw errorEnumValue(desc, value);
      }
      return null;
    };
  }
  return (opts, value) => {
    var _a, _b;
    if (typeof value != "number") {
      throw errorEnumValue(desc, value);
    }
    if (opts.enumAsInteger) {
      return value;
    }
    return (_b = (_a = desc.value[value]) === null || _a === void 0 ? void 0 : _a.jsonName) !== null && _b !== void 0 ? _b : value;
  };
}
function errorEnumValue(desc, value) {
  return new Error(`cannot encode ${desc} to JSON: expected number, got ${formatVal(value)}`);
}
function compileScalarValue2(field) {
  switch (field.scalar) {
    // int32, fixed32, uint32: JSON value will be a decimal number. Either numbers or strings are accepted.
    case ScalarType.INT32:
    case ScalarType.SFIXED32:
    case ScalarType.SINT32:
    case ScalarType.FIXED32:
    case ScalarType.UINT32:
      return (opts, value) => {
        if (typeof value != "number") {
          throw errorScalarValue(field, value);
        }
        return value;
      };
    // float, double: JSON value will be a number or one of the special string values "NaN", "Infinity", and "-Infinity".
    // Either numbers or strings are accepted. Exponent notation is also accepted.
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return (opts, value) => {
        if (typeof value != "number") {
          throw errorScalarValue(field, value);
        }
        if (Number.isNaN(value))
          return "NaN";
        if (value === Number.POSITIVE_INFINITY)
          return "Infinity";
        if (value === Number.NEGATIVE_INFINITY)
          return "-Infinity";
        return value;
      };
    // string:
    case ScalarType.STRING:
      return (opts, value) => {
        if (typeof value != "string") {
          throw errorScalarValue(field, value);
        }
        return value;
      };
    // bool:
    case ScalarType.BOOL:
      return (opts, value) => {
        if (typeof value != "boolean") {
          throw errorScalarValue(field, value);
        }
        return value;
      };
    // JSON value will be a decimal string. Either numbers or strings are accepted.
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
    case ScalarType.INT64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return (opts, value) => {
        if (typeof value == "bigint" || typeof value == "string" || typeof value == "number" && Number.isInteger(value)) {
          return value.toString();
        }
        throw errorScalarValue(field, value);
      };
    // bytes: JSON value will be the data encoded as a string using standard base64 encoding with paddings.
    // Either standard or URL-safe base64 encoding with/without paddings are accepted.
    case ScalarType.BYTES:
      return (opts, value) => {
        if (value instanceof Uint8Array) {
          return base64Encode(value);
        }
        throw errorScalarValue(field, value);
      };
  }
}
function errorScalarValue(field, value) {
  var _a;
  return new Error(`cannot encode ${field} to JSON: ${(_a = checkField(field, value)) === null || _a === void 0 ? void 0 : _a.message}`);
}
function writeExtensions(json, opts, registry, message2, desc) {
  const unknown = message2.$unknown;
  if (unknown === void 0) {
    return;
  }
  const tagSeen = /* @__PURE__ */ new Set();
  for (let i = 0; i < unknown.length; i++) {
    const { no } = unknown[i];
    if (!tagSeen.has(no)) {
      tagSeen.add(no);
      const extension = registry.getExtensionFor(desc, no);
      if (!extension) {
        continue;
      }
      const value = getExtension(message2, extension);
      const [container, field] = createExtensionContainer(extension, value);
      const local = container[unsafeLocal];
      const jsonValue = compileFieldValue(field)(opts, local[field.localName]);
      if (jsonValue !== void 0) {
        json[extension.jsonName] = jsonValue;
      }
    }
  }
}
function anyToJson(val, opts) {
  if (val.typeUrl === "") {
    return {};
  }
  const { registry } = opts;
  let message2;
  let desc;
  if (registry) {
    message2 = anyUnpack(val, registry);
    if (message2) {
      desc = registry.getMessage(message2.$typeName);
    }
  }
  if (!desc || !message2) {
    throw new Error(`cannot encode message ${val.$typeName} to JSON: "${val.typeUrl}" is not in the type registry`);
  }
  const json = hasCustomJsonRepresentation(desc) ? {
    value: compiledWriter2(desc)(opts, message2)
  } : compiledWriter2(desc)(opts, message2);
  json["@type"] = val.typeUrl;
  return json;
}
function durationToJson(val) {
  const seconds = Number(val.seconds);
  const nanos = val.nanos;
  if (seconds > durationSecondsMax || seconds < durationSecondsMin) {
    throw new Error(`cannot encode message ${val.$typeName} to JSON: value out of range`);
  }
  if (seconds > 0 && nanos < 0 || seconds < 0 && nanos > 0) {
    throw new Error(`cannot encode message ${val.$typeName} to JSON: nanos sign must match seconds sign`);
  }
  let text = val.seconds.toString();
  if (nanos !== 0) {
    let nanosStr = Math.abs(nanos).toString();
    nanosStr = "0".repeat(9 - nanosStr.length) + nanosStr;
    if (nanosStr.substring(3) === "000000") {
      nanosStr = nanosStr.substring(0, 3);
    } else if (nanosStr.substring(6) === "000") {
      nanosStr = nanosStr.substring(0, 6);
    }
    text += "." + nanosStr;
    if (nanos < 0 && seconds == 0) {
      text = "-" + text;
    }
  }
  return text + "s";
}
function fieldMaskToJson(val) {
  return val.paths.map((p) => {
    if (protoSnakeCase(protoCamelCase(p)) !== p) {
      throw new Error(`cannot encode message ${val.$typeName} to JSON: lowerCamelCase of path name "${p}" is irreversible`);
    }
    return protoCamelCase(p);
  }).join(",");
}
function structToJson(val) {
  const json = {};
  const keys = Object.keys(val.fields);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    setOwn(json, key, valueToJson(val.fields[key]));
  }
  return json;
}
function valueToJson(val) {
  switch (val.kind.case) {
    case "nullValue":
      return null;
    case "numberValue":
      if (!Number.isFinite(val.kind.value)) {
        throw new Error(`${val.$typeName} cannot be NaN or Infinity`);
      }
      return val.kind.value;
    case "boolValue":
      return val.kind.value;
    case "stringValue":
      return val.kind.value;
    case "structValue":
      return structToJson(val.kind.value);
    case "listValue":
      return listValueToJson(val.kind.value);
    default:
      throw new Error(`${val.$typeName} must have a value`);
  }
}
function listValueToJson(val) {
  return val.values.map(valueToJson);
}
function timestampToJson(val) {
  const ms = Number(val.seconds) * 1e3;
  if (ms < timestampMsMin || ms > timestampMsMax) {
    throw new Error(`cannot encode message ${val.$typeName} to JSON: must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z inclusive`);
  }
  if (val.nanos < 0) {
    throw new Error(`cannot encode message ${val.$typeName} to JSON: nanos must not be negative`);
  }
  if (val.nanos > 999999999) {
    throw new Error(`cannot encode message ${val.$typeName} to JSON: nanos must not be greater than 999999999`);
  }
  let z = "Z";
  if (val.nanos > 0) {
    const nanosStr = (val.nanos + 1e9).toString().substring(1);
    if (nanosStr.substring(3) === "000000") {
      z = "." + nanosStr.substring(0, 3) + "Z";
    } else if (nanosStr.substring(6) === "000") {
      z = "." + nanosStr.substring(0, 6) + "Z";
    } else {
      z = "." + nanosStr + "Z";
    }
  }
  return new Date(ms).toISOString().replace(".000Z", z);
}

// node_modules/@bufbuild/protobuf/dist/esm/from-json.js
var IMPLICIT6 = 2;
function makeReadContext2(options) {
  return Object.assign(Object.assign({ ignoreUnknownFields: false, recursionLimit: 100 }, options), { depth: 0 });
}
function fromJsonString(schema, json, options) {
  return fromJson(schema, parseJsonString(json, schema.typeName), options);
}
function fromJson(schema, json, options) {
  const message2 = create(schema);
  readMessage(schema, message2, json, options);
  return message2;
}
function readMessage(schema, message2, json, options) {
  try {
    compiledReader2(schema)(message2, json, makeReadContext2(options));
  } catch (e) {
    if (isFieldError(e)) {
      throw new Error(`cannot decode ${e.field()} from JSON: ${e.message}`, {
        cause: e
      });
    }
    throw e;
  }
}
var compiledReaders2 = /* @__PURE__ */ new WeakMap();
function compiledReader2(desc) {
  let compiled = compiledReaders2.get(desc);
  if (compiled === void 0) {
    compiled = compileMessage4(desc);
  }
  return compiled;
}
function compileMessage4(desc) {
  const descString = String(desc);
  const readWkt = compileWkt2(desc);
  if (readWkt !== void 0) {
    const compiled2 = (message2, json, ctx) => {
      if (++ctx.depth > ctx.recursionLimit) {
        throw new Error(`cannot decode ${descString} from JSON: maximum recursion depth of ${ctx.recursionLimit} reached`);
      }
      readWkt(message2, json, ctx);
      ctx.depth--;
    };
    compiledReaders2.set(desc, compiled2);
    return compiled2;
  }
  const typeName = desc.typeName;
  const fieldsByJsonKey = /* @__PURE__ */ new Map();
  const compiled = (message2, json, ctx) => {
    var _a;
    if (++ctx.depth > ctx.recursionLimit) {
      throw new Error(`cannot decode ${descString} from JSON: maximum recursion depth of ${ctx.recursionLimit} reached`);
    }
    if (json == null || Array.isArray(json) || typeof json != "object") {
      throw new Error(`cannot decode ${descString} from JSON: ${formatVal(json)}`);
    }
    const oneofSeen = /* @__PURE__ */ new Map();
    const fieldSeen = /* @__PURE__ */ new Set();
    const jsonKeys = Object.keys(json);
    for (let i = 0; i < jsonKeys.length; i++) {
      const jsonKey = jsonKeys[i];
      const jsonValue = json[jsonKey];
      const entry = fieldsByJsonKey.get(jsonKey);
      if (entry !== void 0) {
        const field = entry.field;
        if (fieldSeen.has(field)) {
          throw new FieldError(field, "set multiple times");
        }
        fieldSeen.add(field);
        if (entry.oneofScalarNullSkip && jsonValue === null) {
          continue;
        }
        if (entry.oneof) {
          const seen = oneofSeen.get(entry.oneof);
          if (seen !== void 0) {
            throw new FieldError(entry.oneof, `oneof set multiple times by ${seen.name} and ${field.name}`);
          }
          oneofSeen.set(entry.oneof, field);
        }
        entry.read(message2, jsonValue, ctx);
      } else {
        const extension = jsonKey.startsWith("[") && jsonKey.endsWith("]") ? (_a = ctx.registry) === null || _a === void 0 ? void 0 : _a.getExtension(jsonKey.substring(1, jsonKey.length - 1)) : void 0;
        if ((extension === null || extension === void 0 ? void 0 : extension.extendee.typeName) == typeName) {
          const [container, field, get] = createExtensionContainer(extension);
          compileFieldReader2(field)(container[unsafeLocal], jsonValue, ctx);
          setExtension(message2, extension, get());
        }
        if (extension === void 0 && !ctx.ignoreUnknownFields) {
          throw new Error(`cannot decode ${descString} from JSON: key "${jsonKey}" is unknown`);
        }
      }
    }
    ctx.depth--;
  };
  compiledReaders2.set(desc, compiled);
  for (const field of desc.fields) {
    const entry = {
      read: compileFieldReader2(field),
      field,
      oneof: field.oneof,
      oneofScalarNullSkip: field.oneof !== void 0 && field.fieldKind == "scalar"
    };
    fieldsByJsonKey.set(field.name, entry).set(field.jsonName, entry);
  }
  return compiled;
}
function compileWkt2(desc) {
  if (!desc.typeName.startsWith("google.protobuf.")) {
    return void 0;
  }
  switch (desc.typeName) {
    case "google.protobuf.Any":
      return (message2, json, ctx) => anyFromJson(message2, json, ctx);
    case "google.protobuf.Timestamp":
      return (message2, json) => timestampFromJson(message2, json);
    case "google.protobuf.Duration":
      return (message2, json) => durationFromJson(message2, json);
    case "google.protobuf.FieldMask":
      return (message2, json) => fieldMaskFromJson(message2, json);
    case "google.protobuf.Struct":
      return (message2, json, ctx) => structFromJson(message2, json, ctx);
    case "google.protobuf.Value":
      return (message2, json, ctx) => valueFromJson(message2, json, ctx);
    case "google.protobuf.ListValue":
      return (message2, json, ctx) => listValueFromJson(message2, json, ctx);
    default:
      if (isWrapperDesc(desc)) {
        const valueField = desc.fields[0];
        const localName = valueField.localName;
        const scalar = valueField.scalar;
        const longAsString = valueField.longAsString;
        const readScalar = compileScalarConverter(valueField);
        return (message2, json) => {
          if (json === null) {
            message2[localName] = scalarZeroValue(scalar, longAsString);
          } else {
            message2[localName] = readScalar(json);
          }
        };
      }
      return void 0;
  }
}
function compileFieldReader2(field) {
  switch (field.fieldKind) {
    case "scalar":
      return compileScalarFieldReader2(field);
    case "enum":
      return compileEnumFieldReader2(field);
    case "message":
      return compileMessageFieldReader2(field);
    case "list":
      return compileListFieldReader2(field);
    case "map":
      return compileMapFieldReader2(field);
  }
}
function compileScalarFieldReader2(field) {
  const readScalar = compileScalarConverter(field);
  const localName = field.localName;
  if (field.oneof) {
    const oneofLocalName = field.oneof.localName;
    return (message2, json) => {
      message2[oneofLocalName] = {
        case: localName,
        value: readScalar(json)
      };
    };
  }
  const clear = compileClear(field);
  return (message2, json) => {
    if (json === null) {
      clear(message2);
    } else {
      message2[localName] = readScalar(json);
    }
  };
}
function compileClear(field) {
  const localName = field.localName;
  if (field.presence != IMPLICIT6) {
    return (message2) => {
      delete message2[localName];
    };
  }
  if (field.fieldKind == "enum") {
    const zero = field.enum.values[0].number;
    return (message2) => {
      message2[localName] = zero;
    };
  }
  const scalar = field.scalar;
  const longAsString = field.longAsString;
  return (message2) => {
    message2[localName] = scalarZeroValue(scalar, longAsString);
  };
}
function compileEnumFieldReader2(field) {
  const readEnumValue = compileEnumConverter(field.enum);
  const checkEnum = compileEnumCheck(field.enum);
  const localName = field.localName;
  const nullResets = field.enum.typeName != "google.protobuf.NullValue";
  if (field.oneof) {
    const oneofLocalName = field.oneof.localName;
    return (message2, json, ctx) => {
      if (json === null && nullResets) {
        const oneof = message2[oneofLocalName];
        if (oneof.case === localName) {
          message2[oneofLocalName] = { case: void 0 };
        }
        return;
      }
      const value = readEnumValue(json, ctx.ignoreUnknownFields);
      if (value === tokenIgnoredUnknownEnum) {
        return;
      }
      const check = checkEnum(value);
      if (check !== true) {
        throw new FieldError(field, reasonSingular(field, value, check));
      }
      message2[oneofLocalName] = { case: localName, value };
    };
  }
  const clear = compileClear(field);
  return (message2, json, ctx) => {
    if (json === null && nullResets) {
      clear(message2);
      return;
    }
    const value = readEnumValue(json, ctx.ignoreUnknownFields);
    if (value === tokenIgnoredUnknownEnum) {
      return;
    }
    const check = checkEnum(value);
    if (check !== true) {
      throw new FieldError(field, reasonSingular(field, value, check));
    }
    message2[localName] = value;
  };
}
function compileMessageFieldReader2(field) {
  const localName = field.localName;
  const { toMessage, toLocal } = localMessageMapper(field);
  const readChild = compiledReader2(field.message);
  const nullResets = field.message.typeName != "google.protobuf.Value";
  if (field.oneof) {
    const oneofLocalName = field.oneof.localName;
    return (message2, json, ctx) => {
      const oneof = message2[oneofLocalName];
      if (json === null && nullResets) {
        if (oneof.case === localName) {
          message2[oneofLocalName] = { case: void 0 };
        }
        return;
      }
      const child = toMessage(oneof.case === localName ? oneof.value : void 0);
      readChild(child, json, ctx);
      message2[oneofLocalName] = { case: localName, value: toLocal(child) };
    };
  }
  return (message2, json, ctx) => {
    if (json === null && nullResets) {
      delete message2[localName];
      return;
    }
    const child = toMessage(message2[localName]);
    readChild(child, json, ctx);
    message2[localName] = toLocal(child);
  };
}
function compileListFieldReader2(field) {
  const localName = field.localName;
  const readItem = compileListItemReader(field);
  return (message2, json, ctx) => {
    if (json === null) {
      return;
    }
    if (!Array.isArray(json)) {
      throw new FieldError(field, "expected Array, got " + formatVal(json));
    }
    const items = message2[localName];
    for (let i = 0; i < json.length; i++) {
      const value = readItem(json[i], ctx, items.length);
      if (value !== tokenIgnoredUnknownEnum) {
        items.push(value);
      }
    }
  };
}
function compileListItemReader(field) {
  switch (field.listKind) {
    case "scalar": {
      const parseScalar = compileScalarParse(field);
      const checkValue = checkScalarValue(field.scalar);
      const toLocal = compileScalarToLocal(field);
      return (json, ctx, index) => {
        if (json === null) {
          throw new FieldError(field, "list item must not be null");
        }
        const value = parseScalar(json);
        const check = checkValue(value);
        if (check !== true) {
          throw new FieldError(field, `list item #${index + 1}: ${reasonSingular(field, value, check)}`);
        }
        return toLocal(value);
      };
    }
    case "enum": {
      const readEnumValue = compileEnumConverter(field.enum);
      const checkEnum = compileEnumCheck(field.enum);
      const nullResets = field.enum.typeName != "google.protobuf.NullValue";
      return (json, ctx, index) => {
        if (json === null && nullResets) {
          throw new FieldError(field, "list item must not be null");
        }
        const value = readEnumValue(json, ctx.ignoreUnknownFields);
        if (value === tokenIgnoredUnknownEnum) {
          return value;
        }
        const check = checkEnum(value);
        if (check !== true) {
          throw new FieldError(field, `list item #${index + 1}: ${reasonSingular(field, value, check)}`);
        }
        return value;
      };
    }
    case "message": {
      const { toMessage, toLocal } = localMessageMapper(field);
      const readChild = compiledReader2(field.message);
      const nullResets = field.message.typeName != "google.protobuf.Value";
      return (json, ctx) => {
        if (json === null && nullResets) {
          throw new FieldError(field, "list item must not be null");
        }
        const child = toMessage(void 0);
        readChild(child, json, ctx);
        return toLocal(child);
      };
    }
  }
}
function compileMapFieldReader2(field) {
  const localName = field.localName;
  const mapKey = field.mapKey;
  const parseMapKey = compileMapKeyParse(mapKey);
  const checkMapKey = checkScalarValue(mapKey);
  let parseValue;
  let checkValue;
  let toLocalValue = (value) => value;
  let nullResets = true;
  switch (field.mapKind) {
    case "scalar": {
      parseValue = compileScalarParse(field);
      checkValue = checkScalarValue(field.scalar);
      toLocalValue = compileScalarToLocal(field);
      break;
    }
    case "enum": {
      const readEnumValue = compileEnumConverter(field.enum);
      parseValue = (json, ctx) => readEnumValue(json, ctx.ignoreUnknownFields);
      checkValue = compileEnumCheck(field.enum);
      nullResets = field.enum.typeName != "google.protobuf.NullValue";
      break;
    }
    case "message": {
      const { toMessage, toLocal } = localMessageMapper(field);
      const readChild = compiledReader2(field.message);
      nullResets = field.message.typeName != "google.protobuf.Value";
      parseValue = (json, ctx) => {
        const child = toMessage(void 0);
        readChild(child, json, ctx);
        return toLocal(child);
      };
      break;
    }
  }
  return (message2, json, ctx) => {
    if (json === null) {
      return;
    }
    if (typeof json != "object" || Array.isArray(json)) {
      throw new FieldError(field, "expected object, got " + formatVal(json));
    }
    const record = message2[localName];
    const seen = /* @__PURE__ */ new Set();
    const jsonMapKeys = Object.keys(json);
    for (let i = 0; i < jsonMapKeys.length; i++) {
      const jsonMapKey = jsonMapKeys[i];
      const jsonMapValue = json[jsonMapKey];
      const key = parseMapKey(jsonMapKey);
      if (seen.has(key)) {
        throw new FieldError(field, `duplicate map key "${jsonMapKey}"`);
      }
      seen.add(key);
      if (jsonMapValue === null && nullResets) {
        throw new FieldError(field, "map value must not be null");
      }
      const value = parseValue(jsonMapValue, ctx);
      if (value === tokenIgnoredUnknownEnum) {
        continue;
      }
      const checkKey = checkMapKey(key);
      if (checkKey !== true) {
        throw new FieldError(field, `invalid map key: ${reasonSingular({ scalar: mapKey }, key, checkKey)}`);
      }
      if (checkValue !== void 0) {
        const check = checkValue(value);
        if (check !== true) {
          throw new FieldError(field, `map entry ${formatVal(key)}: ${reasonSingular(field, value, check)}`);
        }
      }
      setOwn(record, key, toLocalValue(value));
    }
  };
}
var tokenIgnoredUnknownEnum = /* @__PURE__ */ Symbol();
function compileEnumConverter(desc) {
  const zero = desc.values[0].number;
  const numbers = /* @__PURE__ */ new Map();
  for (const value of desc.values) {
    numbers.set(value.jsonName, value.number);
  }
  for (const value of desc.values) {
    numbers.set(value.name, value.number);
  }
  return (json, ignoreUnknownFields) => {
    if (json === null) {
      return zero;
    }
    switch (typeof json) {
      case "number":
        if (Number.isInteger(json)) {
          return json;
        }
        break;
      case "string": {
        const number = numbers.get(json);
        if (number !== void 0) {
          return number;
        }
        if (ignoreUnknownFields) {
          return tokenIgnoredUnknownEnum;
        }
        break;
      }
    }
    throw new Error(`cannot decode ${desc} from JSON: ${formatVal(json)}`);
  };
}
function compileEnumCheck(desc) {
  if (desc.open) {
    return checkScalarValue(ScalarType.INT32);
  }
  const values = desc.values;
  return (value) => values.some((v) => v.number === value);
}
function compileScalarConverter(field) {
  const parseScalar = compileScalarParse(field);
  const checkValue = checkScalarValue(field.scalar);
  const toLocal = compileScalarToLocal(field);
  return (json) => {
    const value = parseScalar(json);
    const check = checkValue(value);
    if (check !== true) {
      throw new FieldError(field, reasonSingular(field, value, check));
    }
    return toLocal(value);
  };
}
function compileScalarParse(field) {
  switch (field.scalar) {
    // float, double: JSON value will be a number or one of the special string values "NaN", "Infinity", and "-Infinity".
    // Either numbers or strings are accepted. Exponent notation is also accepted.
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return (json) => {
        if (json === "NaN")
          return NaN;
        if (json === "Infinity")
          return Number.POSITIVE_INFINITY;
        if (json === "-Infinity")
          return Number.NEGATIVE_INFINITY;
        if (typeof json == "number") {
          if (Number.isNaN(json)) {
            throw new FieldError(field, "unexpected NaN number");
          }
          if (!Number.isFinite(json)) {
            throw new FieldError(field, "unexpected infinite number");
          }
          return json;
        }
        if (typeof json == "string") {
          if (json === "") {
            return json;
          }
          if (json.trim().length !== json.length) {
            return json;
          }
          const float = Number(json);
          if (!Number.isFinite(float)) {
            return json;
          }
          return float;
        }
        return json;
      };
    // int32, fixed32, uint32: JSON value will be a decimal number. Either numbers or strings are accepted.
    case ScalarType.INT32:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
    case ScalarType.SINT32:
    case ScalarType.UINT32:
      return int32FromJson;
    // bytes: JSON value will be the data encoded as a string using standard base64 encoding with paddings.
    // Either standard or URL-safe base64 encoding with/without paddings are accepted.
    case ScalarType.BYTES:
      return (json) => {
        if (typeof json == "string") {
          if (json === "") {
            return new Uint8Array(0);
          }
          try {
            return base64Decode(json);
          } catch (e) {
            const message2 = e instanceof Error ? e.message : String(e);
            throw new FieldError(field, message2);
          }
        }
        return json;
      };
    // int64, sfixed64, sint64, fixed64, uint64: The validation step accepts
    // string and number. string, bool: no conversion.
    default:
      return (json) => json;
  }
}
function compileScalarToLocal(field) {
  const longAsString = field.fieldKind !== "map" && field.longAsString;
  switch (field.scalar) {
    case ScalarType.INT64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      if (longAsString) {
        return (value) => String(value);
      }
      return (value) => typeof value == "string" || typeof value == "number" ? protoInt64.parse(value) : value;
    case ScalarType.FIXED64:
    case ScalarType.UINT64:
      if (longAsString) {
        return (value) => String(value);
      }
      return (value) => typeof value == "string" || typeof value == "number" ? protoInt64.uParse(value) : value;
    default:
      return (value) => value;
  }
}
function compileMapKeyParse(type) {
  switch (type) {
    case ScalarType.BOOL:
      return (jsonString) => {
        switch (jsonString) {
          case "true":
            return true;
          case "false":
            return false;
        }
        return jsonString;
      };
    case ScalarType.INT32:
    case ScalarType.FIXED32:
    case ScalarType.UINT32:
    case ScalarType.SFIXED32:
    case ScalarType.SINT32:
      return int32FromJson;
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return (jsonString) => /^-?0+$/.test(jsonString) ? "0" : jsonString.replace(/^(-?)0+(?=\d)/, "$1");
    default:
      return (jsonString) => jsonString;
  }
}
function int32FromJson(json) {
  if (typeof json == "string") {
    if (json === "") {
      return json;
    }
    if (json.trim().length !== json.length) {
      return json;
    }
    const num = Number(json);
    if (Number.isNaN(num)) {
      return json;
    }
    return num;
  }
  return json;
}
function parseJsonString(jsonString, typeName) {
  let json;
  try {
    json = JSON.parse(jsonString);
  } catch (e) {
    const message2 = e instanceof Error ? e.message : String(e);
    throw new Error(
      `cannot decode message ${typeName} from JSON: ${message2}`,
      // @ts-expect-error we use the ES2022 error CTOR option "cause" for better stack traces
      { cause: e }
    );
  }
  checkDuplicateKeys(jsonString, typeName);
  return json;
}
function checkDuplicateKeys(jsonString, typeName) {
  const stack = [];
  let expectKey = false;
  let i = 0;
  while (i < jsonString.length) {
    switch (jsonString[i]) {
      case "{":
        stack.push(/* @__PURE__ */ new Set());
        expectKey = true;
        i++;
        break;
      case "[":
        stack.push(null);
        expectKey = false;
        i++;
        break;
      case "}":
      case "]":
        stack.pop();
        expectKey = false;
        i++;
        break;
      case ",":
        expectKey = stack[stack.length - 1] != null;
        i++;
        break;
      case ":":
        expectKey = false;
        i++;
        break;
      case '"': {
        const open = i++;
        let escaped = false;
        while (i < jsonString.length) {
          if (jsonString[i] == "\\") {
            escaped = true;
            i += 2;
            continue;
          }
          if (jsonString[i] == '"') {
            break;
          }
          i++;
        }
        const close = i++;
        const seen = stack[stack.length - 1];
        if (expectKey && seen) {
          const name = escaped ? JSON.parse(jsonString.substring(open, close + 1)) : jsonString.substring(open + 1, close);
          if (seen.has(name)) {
            throw new Error(`cannot decode message ${typeName} from JSON: duplicate object key "${name}"`);
          }
          seen.add(name);
        }
        expectKey = false;
        break;
      }
      default:
        i++;
        break;
    }
  }
}
function anyFromJson(any, json, ctx) {
  var _a;
  if (json === null || Array.isArray(json) || typeof json != "object") {
    throw new Error(`cannot decode message ${any.$typeName} from JSON: expected object but got ${formatVal(json)}`);
  }
  if (Object.keys(json).length == 0) {
    return;
  }
  const typeUrl = json["@type"];
  if (typeof typeUrl != "string" || typeUrl == "") {
    throw new Error(`cannot decode message ${any.$typeName} from JSON: "@type" is empty`);
  }
  const typeName = typeUrl.includes("/") ? typeUrl.substring(typeUrl.lastIndexOf("/") + 1) : typeUrl;
  if (!typeName.length) {
    throw new Error(`cannot decode message ${any.$typeName} from JSON: "@type" is invalid`);
  }
  const desc = (_a = ctx.registry) === null || _a === void 0 ? void 0 : _a.getMessage(typeName);
  if (!desc) {
    throw new Error(`cannot decode message ${any.$typeName} from JSON: ${typeUrl} is not in the type registry`);
  }
  const message2 = create(desc);
  if (hasCustomJsonRepresentation(desc) && Object.prototype.hasOwnProperty.call(json, "value")) {
    compiledReader2(desc)(message2, json.value, ctx);
  } else {
    const copy = {};
    for (const key of Object.keys(json)) {
      if (key !== "@type") {
        setOwn(copy, key, json[key]);
      }
    }
    compiledReader2(desc)(message2, copy, ctx);
  }
  anyPack(desc, message2, any);
}
function timestampFromJson(timestamp, json) {
  if (typeof json !== "string") {
    throw new Error(`cannot decode message ${timestamp.$typeName} from JSON: ${formatVal(json)}`);
  }
  const matches = json.match(/^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(?:Z|([+-][0-9][0-9]:[0-9][0-9]))$/);
  if (!matches) {
    throw new Error(`cannot decode message ${timestamp.$typeName} from JSON: invalid RFC 3339 string`);
  }
  const ms = Date.parse(
    // biome-ignore format: want this to read well
    matches[1] + "-" + matches[2] + "-" + matches[3] + "T" + matches[4] + ":" + matches[5] + ":" + matches[6] + (matches[8] ? matches[8] : "Z")
  );
  if (Number.isNaN(ms)) {
    throw new Error(`cannot decode message ${timestamp.$typeName} from JSON: invalid RFC 3339 string`);
  }
  if (ms < timestampMsMin || ms > timestampMsMax) {
    throw new Error(`cannot decode message ${timestamp.$typeName} from JSON: must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z inclusive`);
  }
  timestamp.seconds = protoInt64.parse(ms / 1e3);
  timestamp.nanos = 0;
  if (matches[7]) {
    timestamp.nanos = parseInt("1" + matches[7] + "0".repeat(9 - matches[7].length)) - 1e9;
  }
}
function durationFromJson(duration, json) {
  if (typeof json !== "string") {
    throw new Error(`cannot decode message ${duration.$typeName} from JSON: ${formatVal(json)}`);
  }
  const match = json.match(/^(-?[0-9]+)(?:\.([0-9]+))?s/);
  if (match === null) {
    throw new Error(`cannot decode message ${duration.$typeName} from JSON: ${formatVal(json)}`);
  }
  const longSeconds = Number(match[1]);
  if (longSeconds > durationSecondsMax || longSeconds < durationSecondsMin) {
    throw new Error(`cannot decode message ${duration.$typeName} from JSON: ${formatVal(json)}`);
  }
  duration.seconds = protoInt64.parse(longSeconds);
  if (typeof match[2] !== "string") {
    return;
  }
  const nanosStr = match[2] + "0".repeat(9 - match[2].length);
  duration.nanos = parseInt(nanosStr);
  if (longSeconds < 0 || Object.is(longSeconds, -0)) {
    duration.nanos = -duration.nanos;
  }
}
function fieldMaskFromJson(fieldMask, json) {
  if (typeof json !== "string") {
    throw new Error(`cannot decode message ${fieldMask.$typeName} from JSON: ${formatVal(json)}`);
  }
  if (json === "") {
    return;
  }
  fieldMask.paths = json.split(",").map((path2) => {
    if (path2.includes("_")) {
      throw new Error(`cannot decode message ${fieldMask.$typeName} from JSON: path names must be lowerCamelCase`);
    }
    return protoSnakeCase(path2);
  });
}
function structFromJson(struct, json, ctx) {
  if (typeof json != "object" || json == null || Array.isArray(json)) {
    throw new Error(`cannot decode message ${struct.$typeName} from JSON ${formatVal(json)}`);
  }
  const keys = Object.keys(json);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const parsedValue = create(ValueSchema);
    valueFromJson(parsedValue, json[key], ctx);
    setOwn(struct.fields, key, parsedValue);
  }
}
function valueFromJson(value, json, ctx) {
  if (++ctx.depth > ctx.recursionLimit) {
    throw new Error(`cannot decode ${value.$typeName} from JSON: maximum recursion depth of ${ctx.recursionLimit} reached`);
  }
  switch (typeof json) {
    case "number":
      value.kind = { case: "numberValue", value: json };
      break;
    case "string":
      value.kind = { case: "stringValue", value: json };
      break;
    case "boolean":
      value.kind = { case: "boolValue", value: json };
      break;
    case "object":
      if (json === null) {
        value.kind = { case: "nullValue", value: NullValue.NULL_VALUE };
      } else if (Array.isArray(json)) {
        const listValue = create(ListValueSchema);
        listValueFromJson(listValue, json, ctx);
        value.kind = { case: "listValue", value: listValue };
      } else {
        const struct = create(StructSchema);
        structFromJson(struct, json, ctx);
        value.kind = { case: "structValue", value: struct };
      }
      break;
    default:
      throw new Error(`cannot decode message ${value.$typeName} from JSON ${formatVal(json)}`);
  }
  ctx.depth--;
  return value;
}
function listValueFromJson(listValue, json, ctx) {
  if (!Array.isArray(json)) {
    throw new Error(`cannot decode message ${listValue.$typeName} from JSON ${formatVal(json)}`);
  }
  for (let i = 0; i < json.length; i++) {
    const value = create(ValueSchema);
    valueFromJson(value, json[i], ctx);
    listValue.values.push(value);
  }
}

// node_modules/@connectrpc/connect/dist/esm/protocol-connect/code-string.js
function codeToString(value) {
  const name = Code[value];
  if (typeof name != "string") {
    return value.toString();
  }
  return name[0].toLowerCase() + name.substring(1).replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());
}

// node_modules/@connectrpc/connect/dist/esm/connect-error.js
var ConnectError = class _ConnectError extends Error {
  /**
   * Create a new ConnectError.
   * If no code is provided, code "unknown" is used.
   * Outgoing details are only relevant for the server side - a service may
   * raise an error with details, and it is up to the protocol implementation
   * to encode and send the details along with the error.
   */
  constructor(message2, code = Code.Unknown, metadata, outgoingDetails, cause) {
    super(createMessage(message2, code));
    this.name = "ConnectError";
    this.isWireError = false;
    Object.setPrototypeOf(this, new.target.prototype);
    this.rawMessage = message2;
    this.code = code;
    this.metadata = new Headers(metadata !== null && metadata !== void 0 ? metadata : {});
    this.details = outgoingDetails !== null && outgoingDetails !== void 0 ? outgoingDetails : [];
    this.cause = cause;
  }
  /**
   * Convert any value - typically a caught error into a ConnectError,
   * following these rules:
   * - If the value is already a ConnectError, return it as is.
   * - If the value is an AbortError or TimeoutError from the fetch API, return
   *   the message of the error with code Canceled.
   * - For other Errors, return the error message with code Unknown by default.
   * - For other values, return the values String representation as a message,
   *   with the code Unknown by default.
   * The original value will be used for the "cause" property for the new
   * ConnectError.
   */
  static from(reason, code = Code.Unknown) {
    if (reason instanceof _ConnectError) {
      return reason;
    }
    if (reason instanceof Error) {
      if (reason.name == "AbortError" || reason.name == "TimeoutError") {
        return new _ConnectError(reason.message, Code.Canceled);
      }
      return new _ConnectError(reason.message, code, void 0, void 0, reason);
    }
    return new _ConnectError(String(reason), code, void 0, void 0, reason);
  }
  static [Symbol.hasInstance](v) {
    if (!(v instanceof Error)) {
      return false;
    }
    if (Object.getPrototypeOf(v) === _ConnectError.prototype) {
      return true;
    }
    return v.name === "ConnectError" && "code" in v && typeof v.code === "number" && "metadata" in v && "details" in v && Array.isArray(v.details) && "rawMessage" in v && typeof v.rawMessage == "string" && "cause" in v;
  }
  findDetails(typeOrRegistry) {
    const registry = typeOrRegistry.kind === "message" ? {
      getMessage: (typeName) => typeName === typeOrRegistry.typeName ? typeOrRegistry : void 0
    } : typeOrRegistry;
    const details2 = [];
    for (const data of this.details) {
      if ("desc" in data) {
        if (registry.getMessage(data.desc.typeName)) {
          details2.push(create(data.desc, data.value));
        }
        continue;
      }
      const desc = registry.getMessage(data.type);
      if (desc) {
        try {
          details2.push(fromBinary(desc, data.value));
        } catch (_) {
        }
      }
    }
    return details2;
  }
};
function createMessage(message2, code) {
  return message2.length ? `[${codeToString(code)}] ${message2}` : `[${codeToString(code)}]`;
}

// node_modules/@connectrpc/connect/dist/esm/http-headers.js
function decodeBinaryHeader(value, desc, options) {
  try {
    const bytes = base64Decode(value);
    if (desc) {
      return fromBinary(desc, bytes, options);
    }
    return bytes;
  } catch (e) {
    throw ConnectError.from(e, Code.DataLoss);
  }
}

// node_modules/@connectrpc/connect/dist/esm/any-client.js
function makeAnyClient(service, createMethod) {
  const client = {};
  for (const desc of service.methods) {
    const method = createMethod(desc);
    if (method != null) {
      client[desc.localName] = method;
    }
  }
  return client;
}

// node_modules/@connectrpc/connect/dist/esm/protocol/compression.js
var compressedFlag = 1;

// node_modules/@connectrpc/connect/dist/esm/protocol/limit-io.js
var maxReadMaxBytes = 4294967295;
var maxWriteMaxBytes = maxReadMaxBytes;
var defaultCompressMinBytes = 1024;
function validateReadWriteMaxBytes(readMaxBytes, writeMaxBytes, compressMinBytes) {
  writeMaxBytes !== null && writeMaxBytes !== void 0 ? writeMaxBytes : writeMaxBytes = maxWriteMaxBytes;
  readMaxBytes !== null && readMaxBytes !== void 0 ? readMaxBytes : readMaxBytes = maxReadMaxBytes;
  compressMinBytes !== null && compressMinBytes !== void 0 ? compressMinBytes : compressMinBytes = defaultCompressMinBytes;
  if (writeMaxBytes < 1 || writeMaxBytes > maxWriteMaxBytes) {
    throw new ConnectError(`writeMaxBytes ${writeMaxBytes} must be >= 1 and <= ${maxWriteMaxBytes}`, Code.Internal);
  }
  if (readMaxBytes < 1 || readMaxBytes > maxReadMaxBytes) {
    throw new ConnectError(`readMaxBytes ${readMaxBytes} must be >= 1 and <= ${maxReadMaxBytes}`, Code.Internal);
  }
  return {
    readMaxBytes,
    writeMaxBytes,
    compressMinBytes
  };
}
function assertWriteMaxBytes(writeMaxBytes, bytesWritten) {
  if (bytesWritten > writeMaxBytes) {
    throw new ConnectError(`message size ${bytesWritten} is larger than configured writeMaxBytes ${writeMaxBytes}`, Code.ResourceExhausted);
  }
}
function assertReadMaxBytes(readMaxBytes, bytesRead, totalSizeKnown = false) {
  if (bytesRead > readMaxBytes) {
    let message2 = `message size is larger than configured readMaxBytes ${readMaxBytes}`;
    if (totalSizeKnown) {
      message2 = `message size ${bytesRead} is larger than configured readMaxBytes ${readMaxBytes}`;
    }
    throw new ConnectError(message2, Code.ResourceExhausted);
  }
}

// node_modules/@connectrpc/connect/dist/esm/protocol/envelope.js
function createEnvelopeDecoder(readMaxBytes) {
  return new EnvelopeDecoderImpl(readMaxBytes);
}
var EnvelopeDecoderImpl = class {
  constructor(readMaxBytes) {
    this.readMaxBytes = readMaxBytes;
    this.header = new Uint8Array(5);
    this.headerView = new DataView(this.header.buffer);
    this.buf = [];
  }
  get byteLength() {
    return this.buf.reduce((a, b) => a + b.byteLength, 0);
  }
  decode(chunk) {
    this.buf.push(chunk);
    const envs = [];
    for (; ; ) {
      let env = this.pop();
      if (!env) {
        break;
      }
      envs.push(env);
    }
    return envs;
  }
  // consume an enveloped message
  pop() {
    if (!this.env) {
      this.env = this.head();
      if (!this.env) {
        return void 0;
      }
    }
    if (this.cons(this.env.data)) {
      const env = this.env;
      this.env = void 0;
      return env;
    }
    return void 0;
  }
  // consume header
  head() {
    if (!this.cons(this.header)) {
      return void 0;
    }
    const flags = this.headerView.getUint8(0);
    const length = this.headerView.getUint32(1);
    assertReadMaxBytes(this.readMaxBytes, length, true);
    return {
      flags,
      data: new Uint8Array(length)
    };
  }
  // consume from buffer, fill target
  cons(target) {
    const wantLength = target.byteLength;
    if (this.byteLength < wantLength) {
      return false;
    }
    let offset = 0;
    while (offset < wantLength) {
      const chunk = this.buf.shift();
      if (chunk.byteLength > wantLength - offset) {
        target.set(chunk.subarray(0, wantLength - offset), offset);
        this.buf.unshift(chunk.subarray(wantLength - offset));
        offset += wantLength - offset;
      } else {
        target.set(chunk, offset);
        offset += chunk.byteLength;
      }
    }
    return true;
  }
};
async function envelopeCompress(envelope, compression, compressMinBytes) {
  let { flags, data } = envelope;
  if ((flags & compressedFlag) === compressedFlag) {
    throw new ConnectError("invalid envelope, already compressed", Code.Internal);
  }
  if (compression && data.byteLength >= compressMinBytes) {
    data = await compression.compress(data);
    flags = flags | compressedFlag;
  }
  return { data, flags };
}
async function envelopeDecompress(envelope, compression, readMaxBytes) {
  let { flags, data } = envelope;
  if ((flags & compressedFlag) === compressedFlag) {
    if (!compression) {
      throw new ConnectError("received compressed envelope, but do not know how to decompress", Code.Internal);
    }
    data = await compression.decompress(data, readMaxBytes);
    flags = flags ^ compressedFlag;
  }
  return { data, flags };
}
function encodeEnvelope(flags, data) {
  const bytes = new Uint8Array(data.length + 5);
  bytes.set(data, 5);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  v.setUint8(0, flags);
  v.setUint32(1, data.length);
  return bytes;
}

// node_modules/@connectrpc/connect/dist/esm/protocol/async-iterable.js
var __asyncValues = function(o) {
  if (!Symbol.asyncIterator) throw new TypeError("Symbol.asyncIterator is not defined.");
  var m = o[Symbol.asyncIterator], i;
  return m ? m.call(o) : (o = typeof __values === "function" ? __values(o) : o[Symbol.iterator](), i = {}, verb("next"), verb("throw"), verb("return"), i[Symbol.asyncIterator] = function() {
    return this;
  }, i);
  function verb(n) {
    i[n] = o[n] && function(v) {
      return new Promise(function(resolve, reject) {
        v = o[n](v), settle(resolve, reject, v.done, v.value);
      });
    };
  }
  function settle(resolve, reject, d, v) {
    Promise.resolve(v).then(function(v2) {
      resolve({ value: v2, done: d });
    }, reject);
  }
};
var __await = function(v) {
  return this instanceof __await ? (this.v = v, this) : new __await(v);
};
var __asyncGenerator = function(thisArg, _arguments, generator) {
  if (!Symbol.asyncIterator) throw new TypeError("Symbol.asyncIterator is not defined.");
  var g = generator.apply(thisArg, _arguments || []), i, q = [];
  return i = Object.create((typeof AsyncIterator === "function" ? AsyncIterator : Object).prototype), verb("next"), verb("throw"), verb("return", awaitReturn), i[Symbol.asyncIterator] = function() {
    return this;
  }, i;
  function awaitReturn(f) {
    return function(v) {
      return Promise.resolve(v).then(f, reject);
    };
  }
  function verb(n, f) {
    if (g[n]) {
      i[n] = function(v) {
        return new Promise(function(a, b) {
          q.push([n, v, a, b]) > 1 || resume(n, v);
        });
      };
      if (f) i[n] = f(i[n]);
    }
  }
  function resume(n, v) {
    try {
      step(g[n](v));
    } catch (e) {
      settle(q[0][3], e);
    }
  }
  function step(r) {
    r.value instanceof __await ? Promise.resolve(r.value.v).then(fulfill, reject) : settle(q[0][2], r);
  }
  function fulfill(value) {
    resume("next", value);
  }
  function reject(value) {
    resume("throw", value);
  }
  function settle(f, v) {
    if (f(v), q.shift(), q.length) resume(q[0][0], q[0][1]);
  }
};
var __asyncDelegator = function(o) {
  var i, p;
  return i = {}, verb("next"), verb("throw", function(e) {
    throw e;
  }), verb("return"), i[Symbol.iterator] = function() {
    return this;
  }, i;
  function verb(n, f) {
    i[n] = o[n] ? function(v) {
      return (p = !p) ? { value: __await(o[n](v)), done: false } : f ? f(v) : v;
    } : f;
  }
};
function pipeTo(source, ...rest) {
  const [transforms, sink, opt] = pickTransformsAndSink(rest);
  let iterable = source;
  let abortable;
  if ((opt === null || opt === void 0 ? void 0 : opt.propagateDownStreamError) === true) {
    iterable = abortable = makeIterableAbortable(iterable);
  }
  iterable = pipe(iterable, ...transforms, { propagateDownStreamError: false });
  return sink(iterable).catch((reason) => {
    if (abortable) {
      return abortable.abort(reason).then(() => Promise.reject(reason));
    }
    return Promise.reject(reason);
  });
}
function pickTransformsAndSink(rest) {
  let opt;
  if (typeof rest[rest.length - 1] != "function") {
    opt = rest.pop();
  }
  const sink = rest.pop();
  return [rest, sink, opt];
}
function pipe(source, ...rest) {
  return __asyncGenerator(this, arguments, function* pipe_1() {
    var _a;
    const [transforms, opt] = pickTransforms(rest);
    let abortable;
    const sourceIt = source[Symbol.asyncIterator]();
    const cachedSource = {
      [Symbol.asyncIterator]() {
        return sourceIt;
      }
    };
    let iterable = cachedSource;
    if ((opt === null || opt === void 0 ? void 0 : opt.propagateDownStreamError) === true) {
      iterable = abortable = makeIterableAbortable(iterable);
    }
    for (const t of transforms) {
      iterable = t(iterable);
    }
    const it = iterable[Symbol.asyncIterator]();
    try {
      for (; ; ) {
        const r = yield __await(it.next());
        if (r.done === true) {
          break;
        }
        if (!abortable) {
          yield yield __await(r.value);
          continue;
        }
        try {
          yield yield __await(r.value);
        } catch (e) {
          yield __await(abortable.abort(e));
          throw e;
        }
      }
    } finally {
      if ((opt === null || opt === void 0 ? void 0 : opt.propagateDownStreamError) === true) {
        (_a = sourceIt.return) === null || _a === void 0 ? void 0 : _a.call(sourceIt).catch(() => {
        });
      }
    }
  });
}
function pickTransforms(rest) {
  let opt;
  if (typeof rest[rest.length - 1] != "function") {
    opt = rest.pop();
  }
  return [rest, opt];
}
function transformSerializeEnvelope(serialization, endStreamFlag, endSerialization) {
  if (endStreamFlag === void 0 || endSerialization === void 0) {
    return function(iterable) {
      return __asyncGenerator(this, arguments, function* () {
        var _a, e_4, _b, _c;
        try {
          for (var _d = true, iterable_4 = __asyncValues(iterable), iterable_4_1; iterable_4_1 = yield __await(iterable_4.next()), _a = iterable_4_1.done, !_a; _d = true) {
            _c = iterable_4_1.value;
            _d = false;
            const chunk = _c;
            const data = serialization.serialize(chunk);
            yield yield __await({ flags: 0, data });
          }
        } catch (e_4_1) {
          e_4 = { error: e_4_1 };
        } finally {
          try {
            if (!_d && !_a && (_b = iterable_4.return)) yield __await(_b.call(iterable_4));
          } finally {
            if (e_4) throw e_4.error;
          }
        }
      });
    };
  }
  return function(iterable) {
    return __asyncGenerator(this, arguments, function* () {
      var _a, e_5, _b, _c;
      try {
        for (var _d = true, iterable_5 = __asyncValues(iterable), iterable_5_1; iterable_5_1 = yield __await(iterable_5.next()), _a = iterable_5_1.done, !_a; _d = true) {
          _c = iterable_5_1.value;
          _d = false;
          const chunk = _c;
          let data;
          let flags = 0;
          if (chunk.end) {
            flags = flags | endStreamFlag;
            data = endSerialization.serialize(chunk.value);
          } else {
            data = serialization.serialize(chunk.value);
          }
          yield yield __await({ flags, data });
        }
      } catch (e_5_1) {
        e_5 = { error: e_5_1 };
      } finally {
        try {
          if (!_d && !_a && (_b = iterable_5.return)) yield __await(_b.call(iterable_5));
        } finally {
          if (e_5) throw e_5.error;
        }
      }
    });
  };
}
function transformParseEnvelope(serialization, endStreamFlag, endSerialization) {
  if (endSerialization && endStreamFlag !== void 0) {
    return function(iterable) {
      return __asyncGenerator(this, arguments, function* () {
        var _a, e_6, _b, _c;
        try {
          for (var _d = true, iterable_6 = __asyncValues(iterable), iterable_6_1; iterable_6_1 = yield __await(iterable_6.next()), _a = iterable_6_1.done, !_a; _d = true) {
            _c = iterable_6_1.value;
            _d = false;
            const { flags, data } = _c;
            if ((flags & endStreamFlag) === endStreamFlag) {
              yield yield __await({ value: endSerialization.parse(data), end: true });
            } else {
              yield yield __await({ value: serialization.parse(data), end: false });
            }
          }
        } catch (e_6_1) {
          e_6 = { error: e_6_1 };
        } finally {
          try {
            if (!_d && !_a && (_b = iterable_6.return)) yield __await(_b.call(iterable_6));
          } finally {
            if (e_6) throw e_6.error;
          }
        }
      });
    };
  }
  return function(iterable) {
    return __asyncGenerator(this, arguments, function* () {
      var _a, e_7, _b, _c;
      try {
        for (var _d = true, iterable_7 = __asyncValues(iterable), iterable_7_1; iterable_7_1 = yield __await(iterable_7.next()), _a = iterable_7_1.done, !_a; _d = true) {
          _c = iterable_7_1.value;
          _d = false;
          const { flags, data } = _c;
          if (endStreamFlag !== void 0 && (flags & endStreamFlag) === endStreamFlag) {
            if (endSerialization === null) {
              throw new ConnectError("unexpected end flag", Code.InvalidArgument);
            }
            continue;
          }
          yield yield __await(serialization.parse(data));
        }
      } catch (e_7_1) {
        e_7 = { error: e_7_1 };
      } finally {
        try {
          if (!_d && !_a && (_b = iterable_7.return)) yield __await(_b.call(iterable_7));
        } finally {
          if (e_7) throw e_7.error;
        }
      }
    });
  };
}
function transformCompressEnvelope(compression, compressMinBytes) {
  return function(iterable) {
    return __asyncGenerator(this, arguments, function* () {
      var _a, e_8, _b, _c;
      try {
        for (var _d = true, iterable_8 = __asyncValues(iterable), iterable_8_1; iterable_8_1 = yield __await(iterable_8.next()), _a = iterable_8_1.done, !_a; _d = true) {
          _c = iterable_8_1.value;
          _d = false;
          const env = _c;
          yield yield __await(yield __await(envelopeCompress(env, compression, compressMinBytes)));
        }
      } catch (e_8_1) {
        e_8 = { error: e_8_1 };
      } finally {
        try {
          if (!_d && !_a && (_b = iterable_8.return)) yield __await(_b.call(iterable_8));
        } finally {
          if (e_8) throw e_8.error;
        }
      }
    });
  };
}
function transformDecompressEnvelope(compression, readMaxBytes) {
  return function(iterable) {
    return __asyncGenerator(this, arguments, function* () {
      var _a, e_9, _b, _c;
      try {
        for (var _d = true, iterable_9 = __asyncValues(iterable), iterable_9_1; iterable_9_1 = yield __await(iterable_9.next()), _a = iterable_9_1.done, !_a; _d = true) {
          _c = iterable_9_1.value;
          _d = false;
          const env = _c;
          yield yield __await(yield __await(envelopeDecompress(env, compression, readMaxBytes)));
        }
      } catch (e_9_1) {
        e_9 = { error: e_9_1 };
      } finally {
        try {
          if (!_d && !_a && (_b = iterable_9.return)) yield __await(_b.call(iterable_9));
        } finally {
          if (e_9) throw e_9.error;
        }
      }
    });
  };
}
function transformJoinEnvelopes() {
  return function(iterable) {
    return __asyncGenerator(this, arguments, function* () {
      var _a, e_10, _b, _c;
      try {
        for (var _d = true, iterable_10 = __asyncValues(iterable), iterable_10_1; iterable_10_1 = yield __await(iterable_10.next()), _a = iterable_10_1.done, !_a; _d = true) {
          _c = iterable_10_1.value;
          _d = false;
          const { flags, data } = _c;
          yield yield __await(encodeEnvelope(flags, data));
        }
      } catch (e_10_1) {
        e_10 = { error: e_10_1 };
      } finally {
        try {
          if (!_d && !_a && (_b = iterable_10.return)) yield __await(_b.call(iterable_10));
        } finally {
          if (e_10) throw e_10.error;
        }
      }
    });
  };
}
function transformSplitEnvelope(readMaxBytes) {
  return function(iterable) {
    return __asyncGenerator(this, arguments, function* () {
      var _a, e_11, _b, _c;
      const buffer = createEnvelopeDecoder(readMaxBytes);
      try {
        for (var _d = true, iterable_11 = __asyncValues(iterable), iterable_11_1; iterable_11_1 = yield __await(iterable_11.next()), _a = iterable_11_1.done, !_a; _d = true) {
          _c = iterable_11_1.value;
          _d = false;
          const chunk = _c;
          for (const env of buffer.decode(chunk)) {
            yield yield __await(env);
          }
        }
      } catch (e_11_1) {
        e_11 = { error: e_11_1 };
      } finally {
        try {
          if (!_d && !_a && (_b = iterable_11.return)) yield __await(_b.call(iterable_11));
        } finally {
          if (e_11) throw e_11.error;
        }
      }
      if (buffer.byteLength > 0) {
        throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
      }
    });
  };
}
function makeIterableAbortable(iterable) {
  const innerCandidate = iterable[Symbol.asyncIterator]();
  if (innerCandidate.throw === void 0) {
    throw new Error("AsyncIterable does not implement throw");
  }
  const inner = innerCandidate;
  let aborted;
  let resultPromise;
  let it = {
    next() {
      resultPromise = inner.next().finally(() => {
        resultPromise = void 0;
      });
      return resultPromise;
    },
    throw(e) {
      return inner.throw(e);
    }
  };
  if (innerCandidate.return !== void 0) {
    it = Object.assign(Object.assign({}, it), { return(value) {
      return inner.return(value);
    } });
  }
  let used = false;
  return {
    abort(reason) {
      if (aborted) {
        return aborted.state;
      }
      const f = () => {
        return inner.throw(reason).then((r) => r.done === true ? "completed" : "caught", () => "rethrown");
      };
      if (resultPromise) {
        aborted = { reason, state: resultPromise.then(f, f) };
        return aborted.state;
      }
      aborted = { reason, state: f() };
      return aborted.state;
    },
    [Symbol.asyncIterator]() {
      if (used) {
        throw new Error("AsyncIterable cannot be re-used");
      }
      used = true;
      return it;
    }
  };
}
function createAsyncIterable(items) {
  return __asyncGenerator(this, arguments, function* createAsyncIterable_1() {
    yield __await(yield* __asyncDelegator(__asyncValues(items)));
  });
}

// node_modules/@connectrpc/connect/dist/esm/promise-client.js
var __asyncValues2 = function(o) {
  if (!Symbol.asyncIterator) throw new TypeError("Symbol.asyncIterator is not defined.");
  var m = o[Symbol.asyncIterator], i;
  return m ? m.call(o) : (o = typeof __values === "function" ? __values(o) : o[Symbol.iterator](), i = {}, verb("next"), verb("throw"), verb("return"), i[Symbol.asyncIterator] = function() {
    return this;
  }, i);
  function verb(n) {
    i[n] = o[n] && function(v) {
      return new Promise(function(resolve, reject) {
        v = o[n](v), settle(resolve, reject, v.done, v.value);
      });
    };
  }
  function settle(resolve, reject, d, v) {
    Promise.resolve(v).then(function(v2) {
      resolve({ value: v2, done: d });
    }, reject);
  }
};
var __await2 = function(v) {
  return this instanceof __await2 ? (this.v = v, this) : new __await2(v);
};
var __asyncDelegator2 = function(o) {
  var i, p;
  return i = {}, verb("next"), verb("throw", function(e) {
    throw e;
  }), verb("return"), i[Symbol.iterator] = function() {
    return this;
  }, i;
  function verb(n, f) {
    i[n] = o[n] ? function(v) {
      return (p = !p) ? { value: __await2(o[n](v)), done: false } : f ? f(v) : v;
    } : f;
  }
};
var __asyncGenerator2 = function(thisArg, _arguments, generator) {
  if (!Symbol.asyncIterator) throw new TypeError("Symbol.asyncIterator is not defined.");
  var g = generator.apply(thisArg, _arguments || []), i, q = [];
  return i = Object.create((typeof AsyncIterator === "function" ? AsyncIterator : Object).prototype), verb("next"), verb("throw"), verb("return", awaitReturn), i[Symbol.asyncIterator] = function() {
    return this;
  }, i;
  function awaitReturn(f) {
    return function(v) {
      return Promise.resolve(v).then(f, reject);
    };
  }
  function verb(n, f) {
    if (g[n]) {
      i[n] = function(v) {
        return new Promise(function(a, b) {
          q.push([n, v, a, b]) > 1 || resume(n, v);
        });
      };
      if (f) i[n] = f(i[n]);
    }
  }
  function resume(n, v) {
    try {
      step(g[n](v));
    } catch (e) {
      settle(q[0][3], e);
    }
  }
  function step(r) {
    r.value instanceof __await2 ? Promise.resolve(r.value.v).then(fulfill, reject) : settle(q[0][2], r);
  }
  function fulfill(value) {
    resume("next", value);
  }
  function reject(value) {
    resume("throw", value);
  }
  function settle(f, v) {
    if (f(v), q.shift(), q.length) resume(q[0][0], q[0][1]);
  }
};
function createClient(service, transport) {
  return makeAnyClient(service, (method) => {
    switch (method.methodKind) {
      case "unary":
        return createUnaryFn(transport, method);
      case "server_streaming":
        return createServerStreamingFn(transport, method);
      case "client_streaming":
        return createClientStreamingFn(transport, method);
      case "bidi_streaming":
        return createBiDiStreamingFn(transport, method);
      default:
        return null;
    }
  });
}
function createUnaryFn(transport, method) {
  return async (input, options) => {
    var _a, _b;
    const response = await transport.unary(method, options === null || options === void 0 ? void 0 : options.signal, options === null || options === void 0 ? void 0 : options.timeoutMs, options === null || options === void 0 ? void 0 : options.headers, input, options === null || options === void 0 ? void 0 : options.contextValues);
    (_a = options === null || options === void 0 ? void 0 : options.onHeader) === null || _a === void 0 ? void 0 : _a.call(options, response.header);
    (_b = options === null || options === void 0 ? void 0 : options.onTrailer) === null || _b === void 0 ? void 0 : _b.call(options, response.trailer);
    return response.message;
  };
}
function createServerStreamingFn(transport, method) {
  return (input, options) => handleStreamResponse(transport.stream(method, options === null || options === void 0 ? void 0 : options.signal, options === null || options === void 0 ? void 0 : options.timeoutMs, options === null || options === void 0 ? void 0 : options.headers, createAsyncIterable([input]), options === null || options === void 0 ? void 0 : options.contextValues), options);
}
function createClientStreamingFn(transport, method) {
  return async (request3, options) => {
    var _a, e_1, _b, _c;
    var _d, _e;
    const response = await transport.stream(method, options === null || options === void 0 ? void 0 : options.signal, options === null || options === void 0 ? void 0 : options.timeoutMs, options === null || options === void 0 ? void 0 : options.headers, request3, options === null || options === void 0 ? void 0 : options.contextValues);
    (_d = options === null || options === void 0 ? void 0 : options.onHeader) === null || _d === void 0 ? void 0 : _d.call(options, response.header);
    let singleMessage;
    let count3 = 0;
    try {
      for (var _f = true, _g = __asyncValues2(response.message), _h; _h = await _g.next(), _a = _h.done, !_a; _f = true) {
        _c = _h.value;
        _f = false;
        const message2 = _c;
        singleMessage = message2;
        count3++;
      }
    } catch (e_1_1) {
      e_1 = { error: e_1_1 };
    } finally {
      try {
        if (!_f && !_a && (_b = _g.return)) await _b.call(_g);
      } finally {
        if (e_1) throw e_1.error;
      }
    }
    if (!singleMessage) {
      throw new ConnectError("protocol error: missing response message", Code.Unimplemented);
    }
    if (count3 > 1) {
      throw new ConnectError("protocol error: received extra messages for client streaming method", Code.Unimplemented);
    }
    (_e = options === null || options === void 0 ? void 0 : options.onTrailer) === null || _e === void 0 ? void 0 : _e.call(options, response.trailer);
    return singleMessage;
  };
}
function createBiDiStreamingFn(transport, method) {
  return (request3, options) => handleStreamResponse(transport.stream(method, options === null || options === void 0 ? void 0 : options.signal, options === null || options === void 0 ? void 0 : options.timeoutMs, options === null || options === void 0 ? void 0 : options.headers, request3, options === null || options === void 0 ? void 0 : options.contextValues), options);
}
function handleStreamResponse(stream, options) {
  return (function() {
    return __asyncGenerator2(this, arguments, function* () {
      var _a, _b;
      const response = yield __await2(stream);
      (_a = options === null || options === void 0 ? void 0 : options.onHeader) === null || _a === void 0 ? void 0 : _a.call(options, response.header);
      yield __await2(yield* __asyncDelegator2(__asyncValues2(response.message)));
      (_b = options === null || options === void 0 ? void 0 : options.onTrailer) === null || _b === void 0 ? void 0 : _b.call(options, response.trailer);
    });
  })();
}

// node_modules/@connectrpc/connect/dist/esm/protocol/signals.js
function createLinkedAbortController(...signals) {
  const controller = new AbortController();
  const sa = signals.filter((s) => s !== void 0).concat(controller.signal);
  for (const signal of sa) {
    if (signal.aborted) {
      onAbort.apply(signal);
      break;
    }
    signal.addEventListener("abort", onAbort);
  }
  function onAbort() {
    if (!controller.signal.aborted) {
      controller.abort(getAbortSignalReason(this));
    }
    for (const signal of sa) {
      signal.removeEventListener("abort", onAbort);
    }
  }
  return controller;
}
function createDeadlineSignal(timeoutMs) {
  const controller = new AbortController();
  const listener = () => {
    controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
  };
  let timeoutId;
  if (timeoutMs !== void 0) {
    if (timeoutMs <= 0)
      listener();
    else
      timeoutId = setTimeout(listener, timeoutMs);
  }
  return {
    signal: controller.signal,
    cleanup: () => clearTimeout(timeoutId)
  };
}
function getAbortSignalReason(signal) {
  if (!signal.aborted) {
    return void 0;
  }
  if (signal.reason !== void 0) {
    return signal.reason;
  }
  const e = new Error("This operation was aborted");
  e.name = "AbortError";
  return e;
}

// node_modules/@connectrpc/connect/dist/esm/context-values.js
function createContextValues() {
  return {
    get(key) {
      return key.id in this ? this[key.id] : key.defaultValue;
    },
    set(key, value) {
      this[key.id] = value;
      return this;
    },
    delete(key) {
      delete this[key.id];
      return this;
    }
  };
}

// node_modules/@connectrpc/connect/dist/esm/protocol-grpc/headers.js
var headerContentType = "Content-Type";
var headerEncoding = "Grpc-Encoding";
var headerAcceptEncoding = "Grpc-Accept-Encoding";
var headerTimeout = "Grpc-Timeout";
var headerGrpcStatus = "Grpc-Status";
var headerGrpcMessage = "Grpc-Message";
var headerStatusDetailsBin = "Grpc-Status-Details-Bin";
var headerUserAgent = "User-Agent";

// node_modules/@bufbuild/protobuf/dist/esm/codegenv2/service.js
function serviceDesc(file, path2, ...paths) {
  if (paths.length > 0) {
    throw new Error();
  }
  return file.services[path2];
}

// node_modules/@connectrpc/connect/dist/esm/protocol-grpc/gen/status_pb.js
var file_status = /* @__PURE__ */ fileDesc("CgxzdGF0dXMucHJvdG8SCmdvb2dsZS5ycGMiTgoGU3RhdHVzEgwKBGNvZGUYASABKAUSDwoHbWVzc2FnZRgCIAEoCRIlCgdkZXRhaWxzGAMgAygLMhQuZ29vZ2xlLnByb3RvYnVmLkFueUJeCg5jb20uZ29vZ2xlLnJwY0ILU3RhdHVzUHJvdG9QAVo3Z29vZ2xlLmdvbGFuZy5vcmcvZ2VucHJvdG8vZ29vZ2xlYXBpcy9ycGMvc3RhdHVzO3N0YXR1c6ICA1JQQ2IGcHJvdG8z", [file_google_protobuf_any]);
var StatusSchema = /* @__PURE__ */ messageDesc(file_status, 0);

// node_modules/@connectrpc/connect/dist/esm/protocol-grpc/trailer-status.js
var grpcStatusOk = "0";
function findTrailerError(headerOrTrailer) {
  var _a;
  const statusBytes = headerOrTrailer.get(headerStatusDetailsBin);
  if (statusBytes != null) {
    const status = decodeBinaryHeader(statusBytes, StatusSchema);
    if (status.code == 0) {
      return void 0;
    }
    const error2 = new ConnectError(status.message, status.code, headerOrTrailer);
    error2.details = status.details.map((any) => ({
      type: any.typeUrl.substring(any.typeUrl.lastIndexOf("/") + 1),
      value: any.value
    }));
    error2.isWireError = true;
    return error2;
  }
  const grpcStatus = headerOrTrailer.get(headerGrpcStatus);
  if (grpcStatus != null) {
    if (grpcStatus === grpcStatusOk) {
      return void 0;
    }
    const code = parseInt(grpcStatus, 10);
    let error2;
    if (code in Code) {
      error2 = new ConnectError(decodeURIComponent((_a = headerOrTrailer.get(headerGrpcMessage)) !== null && _a !== void 0 ? _a : ""), code, headerOrTrailer);
    } else {
      error2 = new ConnectError(`invalid grpc-status: ${grpcStatus}`, Code.Internal, headerOrTrailer);
    }
    error2.isWireError = true;
    return error2;
  }
  return void 0;
}

// node_modules/@connectrpc/connect/dist/esm/protocol/create-method-url.js
function createMethodUrl(baseUrl, method) {
  return baseUrl.toString().replace(/\/?$/, `/${method.parent.typeName}/${method.name}`);
}

// node_modules/@connectrpc/connect/dist/esm/protocol/normalize.js
function normalize(desc, message2) {
  return create(desc, message2);
}
function normalizeIterable(desc, input) {
  function transform(result) {
    if (result.done === true) {
      return result;
    }
    return {
      done: result.done,
      value: normalize(desc, result.value)
    };
  }
  return {
    [Symbol.asyncIterator]() {
      const it = input[Symbol.asyncIterator]();
      const res = {
        next: () => it.next().then(transform)
      };
      if (it.throw !== void 0) {
        res.throw = (e) => it.throw(e).then(transform);
      }
      if (it.return !== void 0) {
        res.return = (v) => it.return(v).then(transform);
      }
      return res;
    }
  };
}

// node_modules/@connectrpc/connect/dist/esm/interceptor.js
function applyInterceptors(next, interceptors) {
  if (!interceptors) {
    return next;
  }
  for (const i of interceptors.concat().reverse()) {
    next = i(next);
  }
  return next;
}

// node_modules/@connectrpc/connect/dist/esm/protocol/serialization.js
function getJsonOptions(options) {
  var _a;
  const o = Object.assign({}, options);
  (_a = o.ignoreUnknownFields) !== null && _a !== void 0 ? _a : o.ignoreUnknownFields = true;
  return o;
}
function createMethodSerializationLookup(method, binaryOptions, jsonOptions, limitOptions) {
  const inputBinary = limitSerialization(createBinarySerialization(method.input, binaryOptions), limitOptions);
  const inputJson = limitSerialization(createJsonSerialization(method.input, jsonOptions), limitOptions);
  const outputBinary = limitSerialization(createBinarySerialization(method.output, binaryOptions), limitOptions);
  const outputJson = limitSerialization(createJsonSerialization(method.output, jsonOptions), limitOptions);
  return {
    getI(useBinaryFormat) {
      return useBinaryFormat ? inputBinary : inputJson;
    },
    getO(useBinaryFormat) {
      return useBinaryFormat ? outputBinary : outputJson;
    }
  };
}
function limitSerialization(serialization, limitOptions) {
  return {
    serialize(data) {
      const bytes = serialization.serialize(data);
      assertWriteMaxBytes(limitOptions.writeMaxBytes, bytes.byteLength);
      return bytes;
    },
    parse(data) {
      assertReadMaxBytes(limitOptions.readMaxBytes, data.byteLength, true);
      return serialization.parse(data);
    }
  };
}
function createBinarySerialization(desc, options) {
  return {
    parse(data) {
      try {
        return fromBinary(desc, data, options);
      } catch (e) {
        const m = e instanceof Error ? e.message : String(e);
        throw new ConnectError(`parse binary: ${m}`, Code.Internal);
      }
    },
    serialize(data) {
      try {
        return toBinary(desc, data, options);
      } catch (e) {
        const m = e instanceof Error ? e.message : String(e);
        throw new ConnectError(`serialize binary: ${m}`, Code.Internal);
      }
    }
  };
}
function createJsonSerialization(desc, options) {
  var _a, _b;
  const textEncoder = (_a = options === null || options === void 0 ? void 0 : options.textEncoder) !== null && _a !== void 0 ? _a : new TextEncoder();
  const textDecoder = (_b = options === null || options === void 0 ? void 0 : options.textDecoder) !== null && _b !== void 0 ? _b : new TextDecoder();
  const o = getJsonOptions(options);
  return {
    parse(data) {
      try {
        const json = textDecoder.decode(data);
        return fromJsonString(desc, json, o);
      } catch (e) {
        throw ConnectError.from(e, Code.InvalidArgument);
      }
    },
    serialize(data) {
      try {
        const json = toJsonString(desc, data, o);
        return textEncoder.encode(json);
      } catch (e) {
        throw ConnectError.from(e, Code.Internal);
      }
    }
  };
}

// node_modules/@connectrpc/connect/dist/esm/protocol-grpc/content-type.js
var contentTypeRegExp = /^application\/grpc(?:\+(?:(json)(?:; ?charset=utf-?8)?|proto))?$/i;
var contentTypeProto = "application/grpc+proto";
var contentTypeJson = "application/grpc+json";
function parseContentType(contentType) {
  const match = contentType === null || contentType === void 0 ? void 0 : contentType.match(contentTypeRegExp);
  if (!match) {
    return void 0;
  }
  const binary = !match[1];
  return { binary };
}

// node_modules/@connectrpc/connect/dist/esm/protocol/run-call.js
function runUnaryCall(opt) {
  const next = applyInterceptors(opt.next, opt.interceptors);
  const [signal, abort, done] = setupSignal(opt);
  const req = Object.assign(Object.assign({}, opt.req), { message: normalize(opt.req.method.input, opt.req.message), signal });
  return next(req).then((res) => {
    done();
    return res;
  }, abort);
}
function runStreamingCall(opt) {
  const [signal, abort, done] = setupSignal(opt);
  let doneCalled = false;
  const aborted = new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
    } else {
      signal.addEventListener("abort", () => resolve());
    }
  });
  void aborted.then(() => {
    var _a, _b;
    const it = opt.req.message[Symbol.asyncIterator]();
    if (!doneCalled) {
      const error2 = ConnectError.from(getAbortSignalReason(signal), Code.Canceled);
      (_a = it.throw) === null || _a === void 0 ? void 0 : _a.call(it, error2).catch(() => {
      });
    }
    (_b = it.return) === null || _b === void 0 ? void 0 : _b.call(it).catch(() => {
    });
  });
  const next = applyInterceptors(async (req2) => {
    const res = await opt.next(req2);
    const it = res.message[Symbol.asyncIterator]();
    void aborted.then(() => {
      var _a;
      return (_a = it.return) === null || _a === void 0 ? void 0 : _a.call(it).catch(() => {
      });
    });
    return Object.assign(Object.assign({}, res), {
      // This stream sits between the interceptors and the transport. Once
      // the call ends, it ends every read with the call's outcome. It races
      // each read against the signal, so it doesn't rely on the transport
      // honoring the signal.
      message: {
        [Symbol.asyncIterator]: () => ({
          next: async () => {
            const result = signal.aborted ? void 0 : await Promise.race([it.next(), aborted]);
            if (result !== void 0) {
              return result;
            }
            return doneCalled ? { done: true, value: void 0 } : abort(getAbortSignalReason(signal));
          }
        })
      }
    });
  }, opt.interceptors);
  const req = Object.assign(Object.assign({}, opt.req), { message: normalizeIterable(opt.req.method.input, opt.req.message), signal });
  return next(req).then((res) => {
    const it = res.message[Symbol.asyncIterator]();
    const drained = aborted.then(async () => {
      try {
        while ((await it.next()).done !== true) {
        }
      } catch (_a) {
      }
    });
    return Object.assign(Object.assign({}, res), { message: {
      [Symbol.asyncIterator]: () => ({
        async next() {
          if (signal.aborted) {
            await drained;
            return doneCalled ? { done: true, value: void 0 } : abort(getAbortSignalReason(signal));
          }
          try {
            const result = await it.next();
            if (result.done === true) {
              doneCalled = true;
              done();
            }
            return result;
          } catch (e) {
            return abort(e);
          }
        },
        async return(value) {
          if (!signal.aborted) {
            doneCalled = true;
            done();
          }
          await drained;
          return { done: true, value };
        },
        async throw(reason) {
          if (doneCalled) {
            throw ConnectError.from(reason);
          }
          try {
            return await abort(reason);
          } finally {
            await drained;
          }
        }
      })
    } });
  }, abort);
}
function setupSignal(opt) {
  const { signal, cleanup } = createDeadlineSignal(opt.timeoutMs);
  const controller = createLinkedAbortController(opt.signal, signal);
  return [
    controller.signal,
    function abort(reason) {
      const e = controller.signal.aborted ? ConnectError.from(getAbortSignalReason(controller.signal), Code.Canceled) : ConnectError.from(reason);
      controller.abort(e);
      cleanup();
      return Promise.reject(e);
    },
    function done() {
      cleanup();
      controller.abort();
    }
  ];
}

// node_modules/@connectrpc/connect/dist/esm/protocol-grpc/validate-trailer.js
function validateTrailer(trailer, header) {
  const err = findTrailerError(trailer);
  if (err) {
    header.forEach((value, key) => {
      err.metadata.append(key, value);
    });
    throw err;
  }
  if (!header.has(headerGrpcStatus) && !trailer.has(headerGrpcStatus)) {
    throw new ConnectError("protocol error: missing status", Code.Internal);
  }
}

// node_modules/@connectrpc/connect/dist/esm/protocol-grpc/http-status.js
function codeFromHttpStatus(httpStatus) {
  switch (httpStatus) {
    case 400:
      return Code.Internal;
    case 401:
      return Code.Unauthenticated;
    case 403:
      return Code.PermissionDenied;
    case 404:
      return Code.Unimplemented;
    case 429:
      return Code.Unavailable;
    case 502:
      return Code.Unavailable;
    case 503:
      return Code.Unavailable;
    case 504:
      return Code.Unavailable;
    default:
      return Code.Unknown;
  }
}

// node_modules/@connectrpc/connect/dist/esm/protocol-grpc/request-header.js
function requestHeader(useBinaryFormat, timeoutMs, userProvidedHeaders) {
  const result = new Headers(userProvidedHeaders !== null && userProvidedHeaders !== void 0 ? userProvidedHeaders : {});
  result.set(headerContentType, useBinaryFormat ? contentTypeProto : contentTypeJson);
  if (!result.has(headerUserAgent)) {
    result.set(headerUserAgent, "connect-es/2.3.0");
  }
  if (timeoutMs !== void 0) {
    result.set(headerTimeout, `${timeoutMs}m`);
  }
  result.set("Te", "trailers");
  return result;
}
function requestHeaderWithCompression(useBinaryFormat, timeoutMs, userProvidedHeaders, acceptCompression, sendCompression) {
  const result = requestHeader(useBinaryFormat, timeoutMs, userProvidedHeaders);
  if (sendCompression != null) {
    result.set(headerEncoding, sendCompression.name);
  }
  if (acceptCompression.length > 0) {
    result.set(headerAcceptEncoding, acceptCompression.map((c) => c.name).join(","));
  }
  return result;
}

// node_modules/@connectrpc/connect/dist/esm/protocol-grpc/validate-response.js
function validateResponse(status, headers) {
  if (status != 200) {
    throw new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status), headers);
  }
  const mimeType = headers.get(headerContentType);
  const parsedType = parseContentType(mimeType);
  if (parsedType == void 0) {
    throw new ConnectError(`unsupported content type ${mimeType}`, Code.Unknown);
  }
  return {
    foundStatus: headers.has(headerGrpcStatus),
    headerError: findTrailerError(headers)
  };
}
function validateResponseWithCompression(acceptCompression, status, headers) {
  const { foundStatus, headerError } = validateResponse(status, headers);
  let compression;
  const encoding = headers.get(headerEncoding);
  if (encoding !== null && encoding.toLowerCase() !== "identity") {
    compression = acceptCompression.find((c) => c.name === encoding);
    if (!compression) {
      throw new ConnectError(`unsupported response encoding "${encoding}"`, Code.Internal, headers);
    }
  }
  return {
    foundStatus,
    compression,
    headerError
  };
}

// node_modules/@connectrpc/connect/dist/esm/protocol-grpc/transport.js
var __asyncValues3 = function(o) {
  if (!Symbol.asyncIterator) throw new TypeError("Symbol.asyncIterator is not defined.");
  var m = o[Symbol.asyncIterator], i;
  return m ? m.call(o) : (o = typeof __values === "function" ? __values(o) : o[Symbol.iterator](), i = {}, verb("next"), verb("throw"), verb("return"), i[Symbol.asyncIterator] = function() {
    return this;
  }, i);
  function verb(n) {
    i[n] = o[n] && function(v) {
      return new Promise(function(resolve, reject) {
        v = o[n](v), settle(resolve, reject, v.done, v.value);
      });
    };
  }
  function settle(resolve, reject, d, v) {
    Promise.resolve(v).then(function(v2) {
      resolve({ value: v2, done: d });
    }, reject);
  }
};
var __await3 = function(v) {
  return this instanceof __await3 ? (this.v = v, this) : new __await3(v);
};
var __asyncDelegator3 = function(o) {
  var i, p;
  return i = {}, verb("next"), verb("throw", function(e) {
    throw e;
  }), verb("return"), i[Symbol.iterator] = function() {
    return this;
  }, i;
  function verb(n, f) {
    i[n] = o[n] ? function(v) {
      return (p = !p) ? { value: __await3(o[n](v)), done: false } : f ? f(v) : v;
    } : f;
  }
};
var __asyncGenerator3 = function(thisArg, _arguments, generator) {
  if (!Symbol.asyncIterator) throw new TypeError("Symbol.asyncIterator is not defined.");
  var g = generator.apply(thisArg, _arguments || []), i, q = [];
  return i = Object.create((typeof AsyncIterator === "function" ? AsyncIterator : Object).prototype), verb("next"), verb("throw"), verb("return", awaitReturn), i[Symbol.asyncIterator] = function() {
    return this;
  }, i;
  function awaitReturn(f) {
    return function(v) {
      return Promise.resolve(v).then(f, reject);
    };
  }
  function verb(n, f) {
    if (g[n]) {
      i[n] = function(v) {
        return new Promise(function(a, b) {
          q.push([n, v, a, b]) > 1 || resume(n, v);
        });
      };
      if (f) i[n] = f(i[n]);
    }
  }
  function resume(n, v) {
    try {
      step(g[n](v));
    } catch (e) {
      settle(q[0][3], e);
    }
  }
  function step(r) {
    r.value instanceof __await3 ? Promise.resolve(r.value.v).then(fulfill, reject) : settle(q[0][2], r);
  }
  function fulfill(value) {
    resume("next", value);
  }
  function reject(value) {
    resume("throw", value);
  }
  function settle(f, v) {
    if (f(v), q.shift(), q.length) resume(q[0][0], q[0][1]);
  }
};
function createTransport(opt) {
  return {
    async unary(method, signal, timeoutMs, header, message2, contextValues) {
      const serialization = createMethodSerializationLookup(method, opt.binaryOptions, opt.jsonOptions, opt);
      timeoutMs = timeoutMs === void 0 ? opt.defaultTimeoutMs : timeoutMs <= 0 ? void 0 : timeoutMs;
      return await runUnaryCall({
        interceptors: opt.interceptors,
        signal,
        timeoutMs,
        req: {
          stream: false,
          service: method.parent,
          method,
          requestMethod: "POST",
          url: createMethodUrl(opt.baseUrl, method),
          header: requestHeaderWithCompression(opt.useBinaryFormat, timeoutMs, header, opt.acceptCompression, opt.sendCompression),
          contextValues: contextValues !== null && contextValues !== void 0 ? contextValues : createContextValues(),
          message: message2
        },
        next: async (req) => {
          const uRes = await opt.httpClient({
            url: req.url,
            method: "POST",
            header: req.header,
            signal: req.signal,
            body: pipe(createAsyncIterable([req.message]), transformSerializeEnvelope(serialization.getI(opt.useBinaryFormat)), transformCompressEnvelope(opt.sendCompression, opt.compressMinBytes), transformJoinEnvelopes(), {
              propagateDownStreamError: true
            })
          });
          const { compression, headerError } = validateResponseWithCompression(opt.acceptCompression, uRes.status, uRes.header);
          const message3 = await pipeTo(uRes.body, transformSplitEnvelope(opt.readMaxBytes), transformDecompressEnvelope(compression !== null && compression !== void 0 ? compression : null, opt.readMaxBytes), transformParseEnvelope(serialization.getO(opt.useBinaryFormat)), async (iterable) => {
            var _a, e_1, _b, _c;
            let message4;
            try {
              for (var _d = true, iterable_1 = __asyncValues3(iterable), iterable_1_1; iterable_1_1 = await iterable_1.next(), _a = iterable_1_1.done, !_a; _d = true) {
                _c = iterable_1_1.value;
                _d = false;
                const chunk = _c;
                if (message4 !== void 0) {
                  throw new ConnectError("protocol error: received extra output message for unary method", Code.Unimplemented);
                }
                message4 = chunk;
              }
            } catch (e_1_1) {
              e_1 = { error: e_1_1 };
            } finally {
              try {
                if (!_d && !_a && (_b = iterable_1.return)) await _b.call(iterable_1);
              } finally {
                if (e_1) throw e_1.error;
              }
            }
            return message4;
          }, { propagateDownStreamError: false });
          validateTrailer(uRes.trailer, uRes.header);
          if (message3 === void 0) {
            if (headerError) {
              throw headerError;
            }
            throw new ConnectError("protocol error: missing output message for unary method", uRes.trailer.has(headerGrpcStatus) ? Code.Unimplemented : Code.Unknown);
          }
          if (headerError) {
            throw new ConnectError("protocol error: received output message for unary method with error status", Code.Unknown);
          }
          return {
            stream: false,
            service: method.parent,
            method,
            header: uRes.header,
            message: message3,
            trailer: uRes.trailer
          };
        }
      });
    },
    async stream(method, signal, timeoutMs, header, input, contextValues) {
      const serialization = createMethodSerializationLookup(method, opt.binaryOptions, opt.jsonOptions, opt);
      timeoutMs = timeoutMs === void 0 ? opt.defaultTimeoutMs : timeoutMs <= 0 ? void 0 : timeoutMs;
      return runStreamingCall({
        interceptors: opt.interceptors,
        signal,
        timeoutMs,
        req: {
          stream: true,
          service: method.parent,
          method,
          requestMethod: "POST",
          url: createMethodUrl(opt.baseUrl, method),
          header: requestHeaderWithCompression(opt.useBinaryFormat, timeoutMs, header, opt.acceptCompression, opt.sendCompression),
          contextValues: contextValues !== null && contextValues !== void 0 ? contextValues : createContextValues(),
          message: input
        },
        next: async (req) => {
          const uRes = await opt.httpClient({
            url: req.url,
            method: "POST",
            header: req.header,
            signal: req.signal,
            body: pipe(req.message, transformSerializeEnvelope(serialization.getI(opt.useBinaryFormat)), transformCompressEnvelope(opt.sendCompression, opt.compressMinBytes), transformJoinEnvelopes(), { propagateDownStreamError: true })
          });
          const { compression, foundStatus, headerError } = validateResponseWithCompression(opt.acceptCompression, uRes.status, uRes.header);
          if (headerError) {
            throw headerError;
          }
          const res = Object.assign(Object.assign({}, req), { header: uRes.header, trailer: uRes.trailer, message: pipe(uRes.body, transformSplitEnvelope(opt.readMaxBytes), transformDecompressEnvelope(compression !== null && compression !== void 0 ? compression : null, opt.readMaxBytes), transformParseEnvelope(serialization.getO(opt.useBinaryFormat)), function(iterable) {
            return __asyncGenerator3(this, arguments, function* () {
              yield __await3(yield* __asyncDelegator3(__asyncValues3(iterable)));
              if (!foundStatus) {
                validateTrailer(uRes.trailer, uRes.header);
              }
            });
          }, { propagateDownStreamError: true }) });
          return res;
        }
      });
    }
  };
}

// node_modules/@connectrpc/connect-node/dist/esm/compression.js
import * as zlib from "node:zlib";
import { promisify } from "node:util";

// node_modules/@connectrpc/connect-node/dist/esm/node-error.js
function connectErrorFromNodeReason(reason) {
  let code = Code.Internal;
  const chain = unwrapNodeErrorChain(reason).map(getNodeErrorProps);
  if (chain.some((p) => p.code == "ERR_STREAM_WRITE_AFTER_END")) {
    code = Code.Aborted;
  } else if (chain.some((p) => p.code == "ERR_STREAM_DESTROYED" || p.code == "ERR_HTTP2_INVALID_STREAM" || p.code == "ECONNRESET")) {
    code = Code.Aborted;
  } else if (chain.some((p) => p.code == "ETIMEDOUT" || p.code == "ENOTFOUND" || p.code == "EAI_AGAIN" || p.code == "ECONNREFUSED")) {
    code = Code.Unavailable;
  }
  const ce = ConnectError.from(reason, code);
  if (ce !== reason) {
    ce.cause = reason;
  }
  return ce;
}
function unwrapNodeErrorChain(reason) {
  const chain = [];
  for (; ; ) {
    if (!(reason instanceof Error)) {
      break;
    }
    if (chain.includes(reason)) {
      break;
    }
    chain.push(reason);
    if (!("cause" in reason)) {
      break;
    }
    reason = reason.cause;
  }
  return chain;
}
function getNodeErrorProps(reason) {
  const props = {};
  if (reason instanceof Error) {
    if ("code" in reason && typeof reason.code == "string") {
      props.code = reason.code;
    }
    if ("syscall" in reason && typeof reason.syscall == "string") {
      props.syscall = reason.syscall;
    }
  }
  return props;
}
function connectErrorFromH2ResetCode(rstCode) {
  switch (rstCode) {
    case H2Code.PROTOCOL_ERROR:
    case H2Code.INTERNAL_ERROR:
    case H2Code.FLOW_CONTROL_ERROR:
    case H2Code.SETTINGS_TIMEOUT:
    case H2Code.FRAME_SIZE_ERROR:
    case H2Code.COMPRESSION_ERROR:
    case H2Code.CONNECT_ERROR:
      return new ConnectError(`http/2 stream closed with error code ${H2Code[rstCode]} (0x${rstCode.toString(16)})`, Code.Internal);
    case H2Code.REFUSED_STREAM:
      return new ConnectError(`http/2 stream closed with error code ${H2Code[rstCode]} (0x${rstCode.toString(16)})`, Code.Unavailable);
    case H2Code.CANCEL:
      return new ConnectError(`http/2 stream closed with error code ${H2Code[rstCode]} (0x${rstCode.toString(16)})`, Code.Canceled);
    case H2Code.ENHANCE_YOUR_CALM:
      return new ConnectError(`http/2 stream closed with error code ${H2Code[rstCode]} (0x${rstCode.toString(16)})`, Code.ResourceExhausted);
    case H2Code.INADEQUATE_SECURITY:
      return new ConnectError(`http/2 stream closed with error code ${H2Code[rstCode]} (0x${rstCode.toString(16)})`, Code.PermissionDenied);
    case H2Code.HTTP_1_1_REQUIRED:
      return new ConnectError(`http/2 stream closed with error code ${H2Code[rstCode]} (0x${rstCode.toString(16)})`, Code.PermissionDenied);
    default:
      break;
  }
  return void 0;
}
var H2Code;
(function(H2Code2) {
  H2Code2[H2Code2["NO_ERROR"] = 0] = "NO_ERROR";
  H2Code2[H2Code2["PROTOCOL_ERROR"] = 1] = "PROTOCOL_ERROR";
  H2Code2[H2Code2["INTERNAL_ERROR"] = 2] = "INTERNAL_ERROR";
  H2Code2[H2Code2["FLOW_CONTROL_ERROR"] = 3] = "FLOW_CONTROL_ERROR";
  H2Code2[H2Code2["SETTINGS_TIMEOUT"] = 4] = "SETTINGS_TIMEOUT";
  H2Code2[H2Code2["STREAM_CLOSED"] = 5] = "STREAM_CLOSED";
  H2Code2[H2Code2["FRAME_SIZE_ERROR"] = 6] = "FRAME_SIZE_ERROR";
  H2Code2[H2Code2["REFUSED_STREAM"] = 7] = "REFUSED_STREAM";
  H2Code2[H2Code2["CANCEL"] = 8] = "CANCEL";
  H2Code2[H2Code2["COMPRESSION_ERROR"] = 9] = "COMPRESSION_ERROR";
  H2Code2[H2Code2["CONNECT_ERROR"] = 10] = "CONNECT_ERROR";
  H2Code2[H2Code2["ENHANCE_YOUR_CALM"] = 11] = "ENHANCE_YOUR_CALM";
  H2Code2[H2Code2["INADEQUATE_SECURITY"] = 12] = "INADEQUATE_SECURITY";
  H2Code2[H2Code2["HTTP_1_1_REQUIRED"] = 13] = "HTTP_1_1_REQUIRED";
})(H2Code || (H2Code = {}));

// node_modules/@connectrpc/connect-node/dist/esm/compression.js
var gzip2 = promisify(zlib.gzip);
var gunzip2 = promisify(zlib.gunzip);
var brotliCompress2 = promisify(zlib.brotliCompress);
var brotliDecompress2 = promisify(zlib.brotliDecompress);
var compressionGzip = {
  name: "gzip",
  compress(bytes) {
    return asUint8ArrayArrayBuffer(gzip2(bytes, {}));
  },
  decompress(bytes, readMaxBytes) {
    if (bytes.length == 0) {
      return Promise.resolve(new Uint8Array(0));
    }
    return asUint8ArrayArrayBuffer(wrapZLibErrors(gunzip2(bytes, {
      maxOutputLength: readMaxBytes
    }), readMaxBytes));
  }
};
var compressionBrotli = {
  name: "br",
  compress(bytes) {
    return asUint8ArrayArrayBuffer(brotliCompress2(bytes, {}));
  },
  decompress(bytes, readMaxBytes) {
    if (bytes.length == 0) {
      return Promise.resolve(new Uint8Array(0));
    }
    return asUint8ArrayArrayBuffer(wrapZLibErrors(brotliDecompress2(bytes, {
      maxOutputLength: readMaxBytes
    }), readMaxBytes));
  }
};
function asUint8ArrayArrayBuffer(bytes) {
  return bytes.then((b) => {
    if (b.buffer instanceof ArrayBuffer) {
      return b;
    }
    return new Uint8Array(b);
  });
}
function wrapZLibErrors(promise, readMaxBytes) {
  return promise.catch((e) => {
    var _a;
    const props = getNodeErrorProps(e);
    let code = Code.Internal;
    let message2 = "decompression failed";
    switch (props.code) {
      case "ERR_BUFFER_TOO_LARGE":
        code = Code.ResourceExhausted;
        message2 = `message is larger than configured readMaxBytes ${readMaxBytes} after decompression`;
        break;
      case "Z_DATA_ERROR":
      case "ERR_PADDING_2":
        code = Code.InvalidArgument;
        break;
      default:
        if ((_a = props.code) === null || _a === void 0 ? void 0 : _a.startsWith("ERR__ERROR_FORMAT_")) {
          code = Code.InvalidArgument;
        }
        break;
    }
    return Promise.reject(new ConnectError(message2, code, void 0, void 0, e));
  });
}

// node_modules/@connectrpc/connect-node/dist/esm/node-universal-client.js
import * as http from "node:http";
import * as https from "node:https";

// node_modules/@connectrpc/connect-node/dist/esm/node-universal-header.js
function nodeHeaderToWebHeader(nodeHeaders) {
  const header = new Headers();
  for (const [k, v] of Object.entries(nodeHeaders)) {
    if (k.startsWith(":")) {
      continue;
    }
    if (v === void 0) {
      continue;
    }
    if (typeof v == "string") {
      header.append(k, v);
    } else if (typeof v == "number") {
      header.append(k, String(v));
    } else {
      for (const e of v) {
        header.append(k, e);
      }
    }
  }
  return header;
}
function webHeaderToNodeHeaders(headersInit, defaultNodeHeaders) {
  if (headersInit === void 0 && defaultNodeHeaders === void 0) {
    return void 0;
  }
  const o = /* @__PURE__ */ Object.create(null);
  if (defaultNodeHeaders !== void 0) {
    if (Array.isArray(defaultNodeHeaders)) {
      for (let i = 0; i + 1 < defaultNodeHeaders.length; i += 2) {
        const key = defaultNodeHeaders[i];
        const value = defaultNodeHeaders[i + 1];
        if (Array.isArray(o[key])) {
          o[key].push(value);
        } else if (typeof o[key] == "string") {
          o[key] = [o[key], value];
        } else {
          o[key] = value;
        }
      }
    } else {
      for (const [key, value] of Object.entries(defaultNodeHeaders)) {
        if (Array.isArray(value)) {
          o[key] = value.concat();
        } else if (value !== void 0) {
          o[key] = value;
        }
      }
    }
  }
  if (headersInit !== void 0) {
    if (Array.isArray(headersInit)) {
      for (const [key, value] of headersInit) {
        appendWebHeader(o, key, value);
      }
    } else if ("forEach" in headersInit) {
      if (typeof headersInit.forEach == "function") {
        headersInit.forEach((value, key) => {
          appendWebHeader(o, key, value);
        });
      }
    } else {
      for (const [key, value] of Object.entries(headersInit)) {
        appendWebHeader(o, key, value);
      }
    }
  }
  return o;
}
function appendWebHeader(o, key, value) {
  key = key.toLowerCase();
  const existing = o[key];
  if (Array.isArray(existing)) {
    existing.push(value);
  } else if (existing === void 0) {
    o[key] = value;
  } else {
    o[key] = [existing.toString(), value];
  }
}

// node_modules/@connectrpc/connect-node/dist/esm/http2-session-manager.js
import * as http2 from "node:http2";
var Http2SessionManager = class {
  /**
   * The current state of the connection:
   *
   * - "closed"
   *   The connection is closed, or no connection has been opened yet.
   * - connecting
   *   Currently establishing a connection.
   *
   * - "open"
   *   A connection is open and has open streams. PING frames are sent every
   *   pingIntervalMs, unless a stream received data.
   *   If a PING frame is not responded to within pingTimeoutMs, the connection
   *   and all open streams close.
   *
   * - "idle"
   *   A connection is open, but it does not have any open streams.
   *   If pingIdleConnection is enabled, PING frames are used to keep the
   *   connection alive, similar to an "open" connection.
   *   If a connection is idle for longer than idleConnectionTimeoutMs, it closes.
   *   If a request is made on an idle connection that has not been used for
   *   longer than pingIntervalMs, the connection is verified.
   *
   * - "verifying"
   *   Verifying a connection after a long period of inactivity before issuing a
   *   request. A PING frame is sent, and if it times out within pingTimeoutMs, a
   *   new connection is opened.
   *
   * - "error"
   *   The connection is closed because of a transient error. A connection
   *   may have failed to reach the host, or the connection may have died,
   *   or it may have been aborted.
   */
  state() {
    if (this.s.t == "ready") {
      if (this.verifying !== void 0) {
        return "verifying";
      }
      return this.s.streamCount() > 0 ? "open" : "idle";
    }
    return this.s.t;
  }
  /**
   * Returns the error object if the connection is in the "error" state,
   * `undefined` otherwise.
   */
  error() {
    if (this.s.t == "error") {
      return this.s.reason;
    }
    return void 0;
  }
  constructor(url, pingOptions, http2SessionOptions) {
    var _a, _b, _c, _d, _e;
    this.s = closed();
    this.shuttingDown = [];
    this.authority = new URL(url).origin;
    this.http2SessionOptions = http2SessionOptions;
    this.options = {
      pingIntervalMs: (_a = pingOptions === null || pingOptions === void 0 ? void 0 : pingOptions.pingIntervalMs) !== null && _a !== void 0 ? _a : Number.POSITIVE_INFINITY,
      pingTimeoutMs: (_b = pingOptions === null || pingOptions === void 0 ? void 0 : pingOptions.pingTimeoutMs) !== null && _b !== void 0 ? _b : 1e3 * 15,
      pingIdleConnection: (_c = pingOptions === null || pingOptions === void 0 ? void 0 : pingOptions.pingIdleConnection) !== null && _c !== void 0 ? _c : false,
      idleConnectionTimeoutMs: (_d = pingOptions === null || pingOptions === void 0 ? void 0 : pingOptions.idleConnectionTimeoutMs) !== null && _d !== void 0 ? _d : 1e3 * 60 * 15,
      connectTimeoutMs: (_e = pingOptions === null || pingOptions === void 0 ? void 0 : pingOptions.connectTimeoutMs) !== null && _e !== void 0 ? _e : 1e3 * 20
    };
  }
  /**
   * Open a connection if none exists, verify an existing connection if
   * necessary.
   */
  async connect() {
    try {
      const ready2 = await this.gotoReady();
      return ready2.streamCount() > 0 ? "open" : "idle";
    } catch (e) {
      return "error";
    }
  }
  /**
   * Issue a request.
   *
   * This method automatically opens a connection if none exists, and verifies
   * an existing connection if necessary. It calls http2.ClientHttp2Session.request(),
   * and keeps track of all open http2.ClientHttp2Stream.
   *
   * Clients must call notifyResponseByteRead() whenever they successfully read
   * data from the http2.ClientHttp2Stream.
   */
  async request(method, path2, headers, options) {
    for (; ; ) {
      const ready2 = await this.gotoReady();
      try {
        const stream = ready2.conn.request(Object.assign(Object.assign({}, headers), { ":method": method, ":path": path2 }), options);
        ready2.registerRequest(stream);
        return stream;
      } catch (e) {
        if (ready2.conn.closed || ready2.conn.destroyed) {
          continue;
        }
        throw e;
      }
    }
  }
  /**
   * Notify the manager of a successful read from a http2.ClientHttp2Stream.
   *
   * Clients must call this function whenever they successfully read data from
   * a http2.ClientHttp2Stream obtained from request(). This informs the
   * keep-alive logic that the connection is alive, and prevents it from sending
   * unnecessary PING frames.
   */
  notifyResponseByteRead(stream) {
    if (this.s.t == "ready") {
      this.s.responseByteRead(stream);
    }
    for (const s of this.shuttingDown) {
      s.responseByteRead(stream);
    }
  }
  /**
   * If there is an open connection, close it. This also closes any open streams.
   */
  abort(reason) {
    var _a, _b, _c;
    const err = reason !== null && reason !== void 0 ? reason : new ConnectError("connection aborted", Code.Canceled);
    (_b = (_a = this.s).abort) === null || _b === void 0 ? void 0 : _b.call(_a, err);
    for (const s of this.shuttingDown) {
      (_c = s.abort) === null || _c === void 0 ? void 0 : _c.call(s, err);
    }
    this.setState(closedOrError(err));
  }
  async gotoReady() {
    if (this.s.t == "ready") {
      if (this.s.isShuttingDown() || this.s.conn.closed || this.s.conn.destroyed) {
        this.setState(connect2(this.authority, this.http2SessionOptions, this.options.connectTimeoutMs));
      } else if (this.s.requiresVerify()) {
        await this.verify(this.s);
      }
    } else if (this.s.t == "closed" || this.s.t == "error") {
      this.setState(connect2(this.authority, this.http2SessionOptions, this.options.connectTimeoutMs));
    }
    while (this.s.t !== "ready") {
      if (this.s.t === "error") {
        throw this.s.reason;
      }
      if (this.s.t === "closed") {
        this.setState(connect2(this.authority, this.http2SessionOptions, this.options.connectTimeoutMs));
      }
      if (this.s.t === "connecting") {
        await this.s.conn;
      }
    }
    return this.s;
  }
  setState(state) {
    var _a, _b;
    (_b = (_a = this.s).onExitState) === null || _b === void 0 ? void 0 : _b.call(_a);
    if (this.s.t == "ready" && this.s.isShuttingDown()) {
      const sd = this.s;
      this.shuttingDown.push(sd);
      sd.onClose = sd.onError = () => {
        const i = this.shuttingDown.indexOf(sd);
        if (i !== -1) {
          this.shuttingDown.splice(i, 1);
        }
      };
    }
    switch (state.t) {
      case "connecting":
        state.conn.then((value) => {
          try {
            this.setState(ready(value, this.options));
          } catch (e) {
            this.setState(closedOrError(e));
          }
        }, (reason) => {
          this.setState(closedOrError(reason));
        });
        break;
      case "ready":
        state.onClose = () => this.setState(closed());
        state.onError = (err) => this.setState(closedOrError(err));
        break;
      case "closed":
        break;
      case "error":
        break;
    }
    this.s = state;
  }
  verify(stateReady) {
    if (this.verifying !== void 0) {
      return this.verifying;
    }
    this.verifying = stateReady.verify().then((success) => {
      if (success) {
        return;
      }
      this.setState(connect2(this.authority, this.http2SessionOptions, this.options.connectTimeoutMs));
    }, (reason) => {
      this.setState(closedOrError(reason));
    }).finally(() => {
      this.verifying = void 0;
    });
    return this.verifying;
  }
};
function closed() {
  return {
    t: "closed"
  };
}
function error(reason) {
  return {
    t: "error",
    reason
  };
}
function closedOrError(reason) {
  const isCancel = reason instanceof ConnectError && ConnectError.from(reason).code == Code.Canceled;
  return isCancel ? closed() : error(reason);
}
function connect2(authority, http2SessionOptions, connectTimeoutMs) {
  let resolve;
  let reject;
  const conn = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const newConn = http2.connect(authority, http2SessionOptions);
  const connectTimeoutId = safeSetTimeout(() => abort(new ConnectError("connection establishment timed out", Code.Unavailable)), connectTimeoutMs);
  newConn.on("connect", onConnect);
  newConn.on("error", onError);
  function onConnect() {
    resolve === null || resolve === void 0 ? void 0 : resolve(newConn);
    cleanup();
  }
  function onError(err) {
    reject === null || reject === void 0 ? void 0 : reject(connectErrorFromNodeReason(err));
    cleanup();
  }
  function cleanup() {
    clearTimeout(connectTimeoutId);
    newConn.off("connect", onConnect);
    newConn.off("error", onError);
  }
  function abort(reason) {
    if (!newConn.destroyed) {
      newConn.destroy(void 0, http2.constants.NGHTTP2_CANCEL);
    }
    reject === null || reject === void 0 ? void 0 : reject(reason);
  }
  return {
    t: "connecting",
    conn,
    abort,
    onExitState() {
      cleanup();
    }
  };
}
function ready(conn, options) {
  assertSessionOpen(conn);
  conn.unref();
  let lastAliveAt = Date.now();
  let streamCount = 0;
  let pingIntervalId;
  let pingTimeoutId;
  let receivedGoAway = false;
  let receivedGoAwayEnhanceYourCalmTooManyPings = false;
  let idleTimeoutId;
  resetIdleTimeout();
  const state = {
    t: "ready",
    conn,
    streamCount() {
      return streamCount;
    },
    requiresVerify() {
      const elapsedMs = Date.now() - lastAliveAt;
      return elapsedMs > options.pingIntervalMs;
    },
    isShuttingDown() {
      return receivedGoAway;
    },
    onClose: void 0,
    onError: void 0,
    registerRequest(stream) {
      streamCount++;
      if (streamCount == 1) {
        conn.ref();
        resetPingInterval();
        stopIdleTimeout();
      }
      stream.once("response", () => {
        lastAliveAt = Date.now();
        resetPingInterval();
      });
      stream.once("close", () => {
        streamCount--;
        if (streamCount == 0) {
          conn.unref();
          resetPingInterval();
          resetIdleTimeout();
        }
      });
    },
    responseByteRead(stream) {
      if (stream.session !== conn) {
        return;
      }
      if (conn.closed || conn.destroyed) {
        return;
      }
      if (streamCount <= 0) {
        return;
      }
      lastAliveAt = Date.now();
      resetPingInterval();
    },
    verify() {
      conn.ref();
      return new Promise((resolve) => {
        const onFailure = () => {
          resolve(false);
        };
        commonPing(() => {
          if (streamCount == 0)
            conn.unref();
          conn.off("error", onFailure);
          conn.off("close", onFailure);
          resolve(true);
        });
        conn.once("error", onFailure);
        conn.once("close", onFailure);
      });
    },
    abort(reason) {
      if (!conn.destroyed) {
        conn.destroy(reason, http2.constants.NGHTTP2_CANCEL);
      }
    },
    onExitState() {
      if (state.isShuttingDown()) {
        return;
      }
      cleanup();
      this.onError = void 0;
      this.onClose = void 0;
    }
  };
  function resetPingInterval() {
    stopPingInterval();
    if (streamCount > 0 || options.pingIdleConnection) {
      pingIntervalId = safeSetTimeout(onPingInterval, options.pingIntervalMs);
    }
  }
  function stopPingInterval() {
    clearTimeout(pingIntervalId);
    clearTimeout(pingTimeoutId);
  }
  function onPingInterval() {
    commonPing(resetPingInterval);
  }
  function commonPing(onSuccess) {
    if (conn.destroyed) {
      return;
    }
    clearTimeout(pingTimeoutId);
    pingTimeoutId = safeSetTimeout(() => {
      conn.destroy(new ConnectError("PING timed out", Code.Unavailable), http2.constants.NGHTTP2_CANCEL);
    }, options.pingTimeoutMs);
    conn.ping((err, duration) => {
      clearTimeout(pingTimeoutId);
      if (err !== null) {
        return;
      }
      if (duration > options.pingTimeoutMs) {
        conn.destroy(new ConnectError("PING timed out", Code.Unavailable), http2.constants.NGHTTP2_CANCEL);
        return;
      }
      lastAliveAt = Date.now();
      onSuccess();
    });
  }
  function stopIdleTimeout() {
    clearTimeout(idleTimeoutId);
  }
  function resetIdleTimeout() {
    idleTimeoutId = safeSetTimeout(onIdleTimeout, options.idleConnectionTimeoutMs);
  }
  function onIdleTimeout() {
    conn.close();
    onClose();
  }
  function onGoaway(errorCode, lastStreamID, opaqueData) {
    if (errorCode === http2.constants.NGHTTP2_NO_ERROR && streamCount === 0) {
      conn.destroy(new ConnectError("received GOAWAY without any open streams", Code.Canceled), http2.constants.NGHTTP2_NO_ERROR);
      return;
    }
    receivedGoAway = true;
    const tooManyPingsAscii = Buffer.from("too_many_pings", "ascii");
    if (opaqueData === null || opaqueData === void 0 ? void 0 : opaqueData.equals(tooManyPingsAscii)) {
      options.pingIntervalMs = options.pingIntervalMs * 2;
      receivedGoAwayEnhanceYourCalmTooManyPings = true;
    }
  }
  function onClose() {
    var _a;
    cleanup();
    (_a = state.onClose) === null || _a === void 0 ? void 0 : _a.call(state);
  }
  function onError(err) {
    var _a, _b;
    cleanup();
    if (receivedGoAwayEnhanceYourCalmTooManyPings) {
      const ce = new ConnectError(`http/2 connection closed with error code ENHANCE_YOUR_CALM (0x${http2.constants.NGHTTP2_ENHANCE_YOUR_CALM.toString(16)}), too_many_pings, doubled the interval`, Code.ResourceExhausted);
      (_a = state.onError) === null || _a === void 0 ? void 0 : _a.call(state, ce);
    } else {
      (_b = state.onError) === null || _b === void 0 ? void 0 : _b.call(state, connectErrorFromNodeReason(err));
    }
  }
  function cleanup() {
    stopPingInterval();
    stopIdleTimeout();
  }
  conn.on("error", onError);
  conn.on("close", onClose);
  conn.on("goaway", onGoaway);
  return state;
}
function safeSetTimeout(callback, ms) {
  if (ms > 2147483647) {
    return;
  }
  return setTimeout(callback, ms).unref();
}
function assertSessionOpen(conn) {
  if (conn.connecting) {
    throw new ConnectError("expected open session, but it is connecting", Code.Internal);
  }
  if (conn.destroyed) {
    throw new ConnectError("expected open session, but it is destroyed", Code.Internal);
  }
  if (conn.closed) {
    throw new ConnectError("expected open session, but it is closed", Code.Internal);
  }
}

// node_modules/@connectrpc/connect-node/dist/esm/node-universal-client.js
function createNodeHttpClient(options) {
  var _a;
  if (options.httpVersion == "1.1") {
    return createNodeHttp1Client(options.nodeOptions);
  }
  const sessionProvider = (_a = options.sessionProvider) !== null && _a !== void 0 ? _a : ((url) => new Http2SessionManager(url));
  return createNodeHttp2Client(sessionProvider);
}
function createNodeHttp1Client(httpOptions) {
  return async function request3(req) {
    const sentinel = createSentinel(req.signal);
    return new Promise((resolve, reject) => {
      sentinel.onError((e) => {
        reject(e);
      });
      h1Request(sentinel, req.url, Object.assign(Object.assign({}, httpOptions), { headers: webHeaderToNodeHeaders(req.header, httpOptions === null || httpOptions === void 0 ? void 0 : httpOptions.headers), method: req.method }), (request4) => {
        void sinkRequest(req, request4, sentinel);
        request4.on("response", (response) => {
          var _a;
          response.on("error", sentinel.error);
          sentinel.onError((reason) => response.destroy(reason));
          const trailer = new Headers();
          resolve({
            status: (_a = response.statusCode) !== null && _a !== void 0 ? _a : 0,
            header: nodeHeaderToWebHeader(response.headers),
            body: h1ResponseIterable(sentinel, response, trailer),
            trailer
          });
        });
      });
    });
  };
}
function createNodeHttp2Client(sessionProvider) {
  return function request3(req) {
    const sentinel = createSentinel(req.signal);
    const sessionManager = sessionProvider(req.url);
    return new Promise((resolve, reject) => {
      sentinel.onError((e) => {
        reject(e);
      });
      h2Request(sentinel, sessionManager, req.url, req.method, webHeaderToNodeHeaders(req.header), {}, (stream) => {
        void sinkRequest(req, stream, sentinel);
        stream.on("response", (headers) => {
          var _a;
          const response = {
            status: (_a = headers[":status"]) !== null && _a !== void 0 ? _a : 0,
            header: nodeHeaderToWebHeader(headers),
            body: h2ResponseIterable(sentinel, stream, sessionManager),
            trailer: h2ResponseTrailer(stream)
          };
          resolve(response);
        });
      });
    });
  };
}
function h1Request(sentinel, url, options, onRequest) {
  let request3;
  if (new URL(url).protocol.startsWith("https")) {
    request3 = https.request(url, options);
  } else {
    request3 = http.request(url, options);
  }
  sentinel.onError((reason) => request3.destroy(reason));
  request3.flushHeaders();
  request3.on("error", sentinel.error);
  request3.on("socket", function onRequestSocket(socket) {
    function onSocketConnect() {
      socket.off("connect", onSocketConnect);
      onRequest(request3);
    }
    if (socket.readyState === "open") {
      onRequest(request3);
    } else {
      socket.on("connect", onSocketConnect);
    }
  });
}
function h1ResponseIterable(sentinel, response, trailer) {
  const inner = response[Symbol.asyncIterator]();
  return {
    [Symbol.asyncIterator]() {
      return {
        async next() {
          const r = await sentinel.race(inner.next());
          if (r.done === true) {
            nodeHeaderToWebHeader(response.trailers).forEach((value, key) => {
              trailer.set(key, value);
            });
            sentinel.close();
          }
          return r;
        },
        throw(e) {
          sentinel.error(e);
          throw e;
        }
      };
    }
  };
}
function h2Request(sentinel, sm, url, method, headers, options, onStream) {
  const requestUrl = new URL(url);
  if (requestUrl.origin !== sm.authority) {
    const message2 = `cannot make a request to ${requestUrl.origin}: the http2 session is connected to ${sm.authority}`;
    sentinel.error(new ConnectError(message2, Code.Internal));
    return;
  }
  sm.request(method, requestUrl.pathname + requestUrl.search, headers, {}).then((stream) => {
    sentinel.onError((reason) => {
      const rstCode = reason.code == Code.Canceled ? H2Code.CANCEL : H2Code.INTERNAL_ERROR;
      stream.close(rstCode);
      stream.destroy();
    });
    stream.on("error", function h2StreamError(e) {
      if (stream.writableEnded && unwrapNodeErrorChain(e).map(getNodeErrorProps).some((p) => p.code == "ERR_STREAM_WRITE_AFTER_END")) {
        return;
      }
      sentinel.error(e);
    });
    let responseReceived = false;
    stream.once("response", () => {
      responseReceived = true;
    });
    stream.on("close", function h2StreamClose() {
      const err = connectErrorFromH2ResetCode(stream.rstCode);
      if (err) {
        sentinel.error(err);
      } else if (!responseReceived) {
        sentinel.error(new ConnectError(`http/2 stream closed with error code ${H2Code[stream.rstCode]} (0x${stream.rstCode.toString(16)}) before the response was received`, Code.Internal));
      }
    });
    onStream(stream);
  }, (reason) => {
    sentinel.error(reason);
  });
}
function h2ResponseTrailer(response) {
  const trailer = new Headers();
  response.on("trailers", (args) => {
    nodeHeaderToWebHeader(args).forEach((value, key) => {
      trailer.set(key, value);
    });
  });
  return trailer;
}
function h2ResponseIterable(sentinel, response, sm) {
  const inner = response[Symbol.asyncIterator]();
  return {
    [Symbol.asyncIterator]() {
      return {
        async next() {
          const r = await sentinel.race(inner.next());
          if (r.done === true) {
            sentinel.close();
          }
          sm === null || sm === void 0 ? void 0 : sm.notifyResponseByteRead(response);
          return r;
        },
        throw(e) {
          sentinel.error(e);
          throw e;
        }
      };
    }
  };
}
async function sinkRequest(request3, nodeRequest, sentinel) {
  if (request3.body === void 0) {
    await new Promise((resolve) => nodeRequest.end(resolve));
    return;
  }
  const it = request3.body[Symbol.asyncIterator]();
  return new Promise((resolve) => {
    writeNext();
    function writeNext() {
      if (sentinel.isClosed()) {
        return;
      }
      it.next().then((r) => {
        if (r.done === true) {
          nodeRequest.end(resolve);
          return;
        }
        nodeRequest.write(r.value, "binary", (e) => {
          if (e === null || e === void 0) {
            writeNext();
            return;
          }
          if (it.throw !== void 0) {
            it.throw(connectErrorFromNodeReason(e)).catch(() => {
            });
          }
          if (nodeRequest.writableEnded && unwrapNodeErrorChain(e).map(getNodeErrorProps).some((p) => p.code == "ERR_STREAM_WRITE_AFTER_END")) {
            return;
          }
          sentinel.error(e);
        });
      }, (e) => {
        sentinel.error(e);
      });
    }
  });
}
function createSentinel(signal) {
  let rejectRace;
  let closed2 = false;
  let closedError = void 0;
  let onErrorListeners = [];
  const sentinel = {
    error(error2) {
      if (closed2) {
        return;
      }
      closed2 = true;
      closedError = error2 instanceof ConnectError ? error2 : connectErrorFromNodeReason(error2);
      rejectRace === null || rejectRace === void 0 ? void 0 : rejectRace(closedError);
      for (const onRejected of onErrorListeners) {
        onRejected(closedError);
      }
      cleanup();
    },
    close() {
      if (closed2) {
        return;
      }
      closed2 = true;
      if (rejectRace) {
        rejectRace(new ConnectError("sentinel completed early", Code.Internal));
      }
      cleanup();
    },
    isClosed() {
      return closed2;
    },
    onError(onError) {
      if (closed2) {
        if (closedError !== void 0) {
          onError(closedError);
        }
      } else {
        onErrorListeners.push(onError);
      }
    },
    race(promise) {
      let resolveRace;
      const race = new Promise((resolve, reject) => {
        resolveRace = resolve;
        rejectRace = reject;
      });
      promise.then((value) => {
        resolveRace === null || resolveRace === void 0 ? void 0 : resolveRace(value);
      }, (reason) => {
        rejectRace === null || rejectRace === void 0 ? void 0 : rejectRace(reason);
      });
      if (closed2) {
        rejectRace === null || rejectRace === void 0 ? void 0 : rejectRace(closedError !== null && closedError !== void 0 ? closedError : new ConnectError("sentinel completed early", Code.Internal));
      }
      return race;
    }
  };
  function cleanup() {
    if (signal) {
      signal.removeEventListener("abort", onSignalAbort);
    }
    onErrorListeners = [];
    rejectRace = void 0;
  }
  function onSignalAbort() {
    sentinel.error(getAbortSignalReason(this));
  }
  if (signal) {
    signal.addEventListener("abort", onSignalAbort);
    if (signal.aborted) {
      sentinel.error(getAbortSignalReason(signal));
    }
  }
  return sentinel;
}

// node_modules/@connectrpc/connect-node/dist/esm/node-transport-options.js
function validateNodeTransportOptions(options) {
  var _a, _b, _c, _d;
  let httpClient;
  if (options.httpVersion == "2") {
    let sessionManager;
    if (options.sessionManager) {
      sessionManager = options.sessionManager;
    } else {
      sessionManager = new Http2SessionManager(options.baseUrl, {
        pingIntervalMs: options.pingIntervalMs,
        pingIdleConnection: options.pingIdleConnection,
        pingTimeoutMs: options.pingTimeoutMs,
        idleConnectionTimeoutMs: options.idleConnectionTimeoutMs,
        connectTimeoutMs: options.connectTimeoutMs
      }, options.nodeOptions);
    }
    httpClient = createNodeHttpClient({
      httpVersion: "2",
      sessionProvider: () => sessionManager
    });
  } else {
    httpClient = createNodeHttpClient({
      httpVersion: "1.1",
      nodeOptions: options.nodeOptions
    });
  }
  return Object.assign(Object.assign(Object.assign({}, options), { httpClient, useBinaryFormat: (_a = options.useBinaryFormat) !== null && _a !== void 0 ? _a : true, interceptors: (_b = options.interceptors) !== null && _b !== void 0 ? _b : [], sendCompression: (_c = options.sendCompression) !== null && _c !== void 0 ? _c : null, acceptCompression: (_d = options.acceptCompression) !== null && _d !== void 0 ? _d : [
    compressionGzip,
    compressionBrotli
  ] }), validateReadWriteMaxBytes(options.readMaxBytes, options.writeMaxBytes, options.compressMinBytes));
}

// node_modules/@connectrpc/connect-node/dist/esm/grpc-transport.js
function createGrpcTransport(options) {
  return createTransport(validateNodeTransportOptions(Object.assign(Object.assign({}, options), { httpVersion: "2" })));
}

// src/gen/llmctl/v1/limiter_pb.ts
var limiter_pb_exports = {};
__export(limiter_pb_exports, {
  AccountingSource: () => AccountingSource,
  AccountingSourceSchema: () => AccountingSourceSchema,
  AcquireRequestSchema: () => AcquireRequestSchema,
  AcquireResponseSchema: () => AcquireResponseSchema,
  Advice: () => Advice,
  AdviceSchema: () => AdviceSchema,
  BreakerState: () => BreakerState,
  BreakerStateSchema: () => BreakerStateSchema,
  BucketSchema: () => BucketSchema,
  ClaimRequestSchema: () => ClaimRequestSchema,
  ClaimResponseSchema: () => ClaimResponseSchema,
  ClaimResponse_State: () => ClaimResponse_State,
  ClaimResponse_StateSchema: () => ClaimResponse_StateSchema,
  ClientStatusSchema: () => ClientStatusSchema,
  CompleteRequestSchema: () => CompleteRequestSchema,
  CompleteResponseSchema: () => CompleteResponseSchema,
  CooldownRequestSchema: () => CooldownRequestSchema,
  CooldownResponseSchema: () => CooldownResponseSchema,
  Dimension: () => Dimension,
  DimensionSchema: () => DimensionSchema,
  EventKind: () => EventKind,
  EventKindSchema: () => EventKindSchema,
  EventSchema: () => EventSchema,
  FleetStatusSchema: () => FleetStatusSchema,
  KeyStatusSchema: () => KeyStatusSchema,
  LimitSource: () => LimitSource,
  LimitSourceSchema: () => LimitSourceSchema,
  Limiter: () => Limiter,
  OutputCounting: () => OutputCounting,
  OutputCountingSchema: () => OutputCountingSchema,
  Period: () => Period,
  PeriodSchema: () => PeriodSchema,
  PingRequestSchema: () => PingRequestSchema,
  PingResponseSchema: () => PingResponseSchema,
  PlanWindowSchema: () => PlanWindowSchema,
  Provider: () => Provider,
  ProviderSchema: () => ProviderSchema,
  RefusalReason: () => RefusalReason,
  RefusalReasonSchema: () => RefusalReasonSchema,
  ReportRequestSchema: () => ReportRequestSchema,
  ReportResponseSchema: () => ReportResponseSchema,
  ResetRequestSchema: () => ResetRequestSchema,
  ResetResponseSchema: () => ResetResponseSchema,
  RunStatusSchema: () => RunStatusSchema,
  SessionEventSchema: () => SessionEventSchema,
  SessionRequestSchema: () => SessionRequestSchema,
  SetRunBudgetRequestSchema: () => SetRunBudgetRequestSchema,
  SetRunBudgetResponseSchema: () => SetRunBudgetResponseSchema,
  StatusRequestSchema: () => StatusRequestSchema,
  StatusResponseSchema: () => StatusResponseSchema,
  WatchRequestSchema: () => WatchRequestSchema,
  WithdrawRequestSchema: () => WithdrawRequestSchema,
  WithdrawResponseSchema: () => WithdrawResponseSchema,
  file_llmctl_v1_limiter: () => file_llmctl_v1_limiter
});
var file_llmctl_v1_limiter = /* @__PURE__ */ fileDesc("ChdsbG1jdGwvdjEvbGltaXRlci5wcm90bxIJbGxtY3RsLnYxIjcKD1dpdGhkcmF3UmVxdWVzdBISCgphY3F1aXJlX2lkGAEgASgJEhAKCGxlYXNlX2lkGAIgASgJIiUKEFdpdGhkcmF3UmVzcG9uc2USEQoJd2l0aGRyYXduGAEgASgIIhsKDFJlc2V0UmVxdWVzdBILCgNrZXkYASABKAkiZQoNUmVzZXRSZXNwb25zZRIWCg5sZWFybmVkX2xpbWl0cxgBIAEoAxIMCgRkZWJ0GAIgASgBEhYKDmNvb2xkb3duX2VuZGVkGAMgASgIEhYKDmJyZWFrZXJfY2xvc2VkGAQgASgIIsYCCg5BY3F1aXJlUmVxdWVzdBILCgNrZXkYASABKAkSEAoIcmVxdWVzdHMYAiABKAMSFAoMaW5wdXRfdG9rZW5zGAMgASgDEhUKDW91dHB1dF90b2tlbnMYBCABKAMSEAoIcHJpb3JpdHkYBSABKAUSEwoLbWF4X3dhaXRfbXMYBiABKAMSEQoJY2xpZW50X2lkGAcgASgJEg4KBnJ1bl9pZBgIIAEoCRIYCgtyb3V0ZV9ncm91cBgJIAEoCUgAiAEBEhQKB3Byb2ZpbGUYCiABKAlIAYgBARIjChZvdXRwdXRfdG9rZW5zX2RlY2xhcmVkGAsgASgISAKIAQESEgoKYWNxdWlyZV9pZBgMIAEoCUIOCgxfcm91dGVfZ3JvdXBCCgoIX3Byb2ZpbGVCGQoXX291dHB1dF90b2tlbnNfZGVjbGFyZWQiyAEKD0FjcXVpcmVSZXNwb25zZRIPCgdncmFudGVkGAEgASgIEhAKCGxlYXNlX2lkGAIgASgJEgsKA2tleRgDIAEoCRIRCgl3YWl0ZWRfbXMYBCABKAMSGgoSbm90X2JlZm9yZV91bml4X21zGAUgASgDEg4KBnJlYXNvbhgGIAEoCRIXCg9leHBpcmVzX3VuaXhfbXMYByABKAMSLQoLcmVhc29uX2NvZGUYCCABKA4yGC5sbG1jdGwudjEuUmVmdXNhbFJlYXNvbiKKAwoNUmVwb3J0UmVxdWVzdBIQCghsZWFzZV9pZBgBIAEoCRITCgtzdGF0dXNfY29kZRgCIAEoBRI2CgdoZWFkZXJzGAMgAygLMiUubGxtY3RsLnYxLlJlcG9ydFJlcXVlc3QuSGVhZGVyc0VudHJ5EhQKDGlucHV0X3Rva2VucxgEIAEoAxIbChNjYWNoZWRfaW5wdXRfdG9rZW5zGAUgASgDEhUKDW91dHB1dF90b2tlbnMYBiABKAMSEgoKZXJyb3JfdHlwZRgHIAEoCRIVCg1lcnJvcl9tZXNzYWdlGAggASgJEhYKDnN0cmVhbV9zdGFydGVkGAkgASgIEg8KB2F0dGVtcHQYCiABKAUSEwoLdXNhZ2Vfa25vd24YCyABKAgSHQoVZmlyc3RfYXR0ZW1wdF91bml4X21zGAwgASgDEhgKEGFuc3dlcmVkX3VuaXhfbXMYDSABKAMaLgoMSGVhZGVyc0VudHJ5EgsKA2tleRgBIAEoCRINCgV2YWx1ZRgCIAEoCToCOAEicQoOUmVwb3J0UmVzcG9uc2USIQoGYWR2aWNlGAEgASgOMhEubGxtY3RsLnYxLkFkdmljZRIWCg5yZXRyeV9hZnRlcl9tcxgCIAEoAxIUCgxmYWxsYmFja19rZXkYAyABKAkSDgoGcmVhc29uGAQgASgJIkMKD0Nvb2xkb3duUmVxdWVzdBILCgNrZXkYASABKAkSEwoLZHVyYXRpb25fbXMYAiABKAMSDgoGcmVhc29uGAMgASgJIikKEENvb2xkb3duUmVzcG9uc2USFQoNdW50aWxfdW5peF9tcxgBIAEoAyIjCg1TdGF0dXNSZXF1ZXN0EhIKCmtleV9wcmVmaXgYASABKAkiNwoMV2F0Y2hSZXF1ZXN0EhMKC2ludGVydmFsX21zGAEgASgDEhIKCmtleV9wcmVmaXgYAiABKAkilAMKDlN0YXR1c1Jlc3BvbnNlEiIKBGtleXMYASADKAsyFC5sbG1jdGwudjEuS2V5U3RhdHVzEhMKC25vd191bml4X21zGAIgASgDEhcKD3N0YXJ0ZWRfdW5peF9tcxgDIAEoAxIQCghzZXNzaW9ucxgEIAEoAxIOCgZzb2NrZXQYBSABKAkSIAoGZXZlbnRzGAYgAygLMhAubGxtY3RsLnYxLkV2ZW50Eh0KFWR1cGxpY2F0ZXNfc3VwcHJlc3NlZBgHIAEoAxIiCgRydW5zGAggAygLMhQubGxtY3RsLnYxLlJ1blN0YXR1cxIeChZjbGFpbXNfbG9zdF9hdF91bml4X21zGAkgASgDEiMKG3N0b3JlX2ZhaWxpbmdfc2luY2VfdW5peF9tcxgKIAEoAxITCgtzdG9yZV9lcnJvchgLIAEoCRIoCgdjbGllbnRzGAwgAygLMhcubGxtY3RsLnYxLkNsaWVudFN0YXR1cxIlCgVmbGVldBgNIAEoCzIWLmxsbWN0bC52MS5GbGVldFN0YXR1cyKnAQoLRmxlZXRTdGF0dXMSDAoEaG9zdBgBIAEoCRINCgVyZWRpcxgCIAEoCRIRCgljb25uZWN0ZWQYAyABKAgSDQoFaG9zdHMYBCABKAMSEgoKbGFzdF9lcnJvchgFIAEoCRIQCghzbGljZV9tcxgGIAEoAxIcChRyZWRpc19jb21tYW5kc190b3RhbBgHIAEoAxIVCg1yZWRpc19jbHVzdGVyGAggASgIIrYCCglSdW5TdGF0dXMSDgoGcnVuX2lkGAEgASgJEg0KBWNhbGxzGAIgASgDEg8KB3JldHJpZXMYAyABKAMSFwoPc3RhcnRlZF91bml4X21zGAQgASgDEg8KB3dhbGxfbXMYBSABKAMSEQoJbWF4X2NhbGxzGAYgASgDEhMKC21heF9yZXRyaWVzGAcgASgDEhgKEG1heF93YWxsX3RpbWVfbXMYCCABKAMSEQoJZXhoYXVzdGVkGAkgASgJEhsKE3JlcXVlc3RzX3Blcl9zZWNvbmQYCiABKAESGQoRdG9rZW5zX3Blcl9taW51dGUYCyABKAESEQoJaW5fZmxpZ2h0GAwgASgDEhMKC3F1ZXVlX2RlcHRoGA0gASgDEhoKEnJhdGVfbGltaXRlZF90b3RhbBgOIAEoAyLyAQoMQ2xpZW50U3RhdHVzEhEKCWNsaWVudF9pZBgBIAEoCRILCgNwaWQYAiABKAUSFAoMcHJvY2Vzc19uYW1lGAMgASgJEgsKA3VpZBgEIAEoAxIMCgR1c2VyGAUgASgJEhsKE3JlcXVlc3RzX3Blcl9zZWNvbmQYBiABKAESGQoRdG9rZW5zX3Blcl9taW51dGUYByABKAESEQoJaW5fZmxpZ2h0GAggASgDEhMKC3F1ZXVlX2RlcHRoGAkgASgDEhoKEnJhdGVfbGltaXRlZF90b3RhbBgKIAEoAxIVCg1ncmFudGVkX3RvdGFsGAsgASgDImcKE1NldFJ1bkJ1ZGdldFJlcXVlc3QSDgoGcnVuX2lkGAEgASgJEhEKCW1heF9jYWxscxgCIAEoAxITCgttYXhfcmV0cmllcxgDIAEoAxIYChBtYXhfd2FsbF90aW1lX21zGAQgASgDIhYKFFNldFJ1bkJ1ZGdldFJlc3BvbnNlIm0KBUV2ZW50Eg8KB3VuaXhfbXMYASABKAMSCwoDa2V5GAIgASgJEgwKBGtpbmQYAyABKAkSDwoHbWVzc2FnZRgEIAEoCRInCglraW5kX2NvZGUYBSABKA4yFC5sbG1jdGwudjEuRXZlbnRLaW5kIqIECgZCdWNrZXQSEQoJZGltZW5zaW9uGAEgASgJEg4KBnBlcmlvZBgCIAEoCRINCgVsaW1pdBgDIAEoARIQCghjYXBhY2l0eRgEIAEoARINCgVsZXZlbBgFIAEoARIOCgZzb3VyY2UYBiABKAkSFwoPY2FwYWNpdHlfc291cmNlGAcgASgJEhgKEGNvbmZpZ3VyZWRfbGltaXQYCCABKAESGwoTY29uZmlndXJlZF9jYXBhY2l0eRgJIAEoARIVCg1sZWFybmVkX2xpbWl0GAogASgBEhgKEGxlYXJuZWRfY2FwYWNpdHkYCyABKAESFgoObGVhcm5lZF9zb3VyY2UYDCABKAkSLAoOZGltZW5zaW9uX2NvZGUYDSABKA4yFC5sbG1jdGwudjEuRGltZW5zaW9uEiYKC3BlcmlvZF9jb2RlGA4gASgOMhEubGxtY3RsLnYxLlBlcmlvZBIrCgtzb3VyY2VfY29kZRgPIAEoDjIWLmxsbWN0bC52MS5MaW1pdFNvdXJjZRI0ChRjYXBhY2l0eV9zb3VyY2VfY29kZRgQIAEoDjIWLmxsbWN0bC52MS5MaW1pdFNvdXJjZRIzChNsZWFybmVkX3NvdXJjZV9jb2RlGBEgASgOMhYubGxtY3RsLnYxLkxpbWl0U291cmNlEhUKDWhlYWRlcnNfbGltaXQYEiABKAESFwoPYmVuZWF0aF9oZWFkZXJzGBMgASgIIucMCglLZXlTdGF0dXMSCwoDa2V5GAEgASgJEiIKB2J1Y2tldHMYAiADKAsyES5sbG1jdGwudjEuQnVja2V0EhEKCWluX2ZsaWdodBgDIAEoAxIXCg9tYXhfY29uY3VycmVuY3kYBCABKAMSEwoLcXVldWVfZGVwdGgYBSABKAMSGQoRcXVldWVfd2FpdF9wNTBfbXMYBiABKAMSGQoRcXVldWVfd2FpdF9wOTVfbXMYByABKAMSGgoScmF0ZV9saW1pdGVkX3RvdGFsGAggASgDEh8KF3JhdGVfbGltaXRlZF9wZXJfbWludXRlGAkgASgBEhcKD3Rva2Vuc19yZXNlcnZlZBgKIAEoAxITCgt0b2tlbnNfdXNlZBgLIAEoAxIdChVjb29sZG93bl9yZW1haW5pbmdfbXMYDCABKAMSFwoPZmFsbGJhY2tzX3RvdGFsGA0gASgDEhYKDnJlcXVlc3RzX3RvdGFsGA4gASgDEhUKDWdyYW50ZWRfdG90YWwYDyABKAMSFwoPY29vbGRvd25fcmVhc29uGBAgASgJEhoKEnRva2Vuc19vdXRzdGFuZGluZxgRIAEoAxIRCglhbmNlc3RvcnMYEiADKAkSOwoMbGFzdF9oZWFkZXJzGBMgAygLMiUubGxtY3RsLnYxLktleVN0YXR1cy5MYXN0SGVhZGVyc0VudHJ5EhsKE3JlcXVlc3RzX3Blcl9zZWNvbmQYFCABKAESFgoOcmVqZWN0ZWRfdG90YWwYFSABKAMSHAoUZmFsbGJhY2tzX3Blcl9taW51dGUYFiABKAESFQoNcmV0cmllc190b3RhbBgXIAEoAxIWCg5naXZlX3Vwc190b3RhbBgYIAEoAxIPCgdicmVha2VyGBkgASgJEiEKGWJyZWFrZXJfb3Blbl9yZW1haW5pbmdfbXMYGiABKAMSEAoIcHJvdmlkZXIYGyABKAkSGQoRb3V0cHV0X2NvdW50ZWRfYXMYHCABKAkSIAoYb3V0cHV0X2NvdW50ZWRfYXNfc291cmNlGB0gASgJEh0KFWhlYWRlcnNfaWdub3JlZF90b3RhbBgeIAEoAxIUCgxmbGVldF9zaGFyZWQYHyABKAgSEwoLZmxlZXRfc2hhcmUYICABKAESEwoLZmxlZXRfc2xvdHMYISABKAMSHgoWb3V0cHV0X3Rva2Vuc19lc3RpbWF0ZRgiIAEoAxIiChp1bmRlY2xhcmVkX3Rva2Vuc19yZXNlcnZlZBgjIAEoAxIeChZ1bmRlY2xhcmVkX3Rva2Vuc191c2VkGCQgASgDEhoKEmNvbmN1cnJlbmN5X3NvdXJjZRglIAEoCRIbChNsZWFybmVkX2NvbmN1cnJlbmN5GCYgASgDEiEKGWRhaWx5X3F1b3RhX3VudGlsX3VuaXhfbXMYJyABKAMSEwoLZGFpbHlfcXVvdGEYKCABKAkSFwoPZml4ZWRfd2luZG93X21zGCkgASgDEi0KDGJyZWFrZXJfY29kZRgqIAEoDjIXLmxsbWN0bC52MS5CcmVha2VyU3RhdGUSKgoNcHJvdmlkZXJfY29kZRgrIAEoDjITLmxsbWN0bC52MS5Qcm92aWRlchI5ChZvdXRwdXRfY291bnRlZF9hc19jb2RlGCwgASgOMhkubGxtY3RsLnYxLk91dHB1dENvdW50aW5nEkIKHW91dHB1dF9jb3VudGVkX2FzX3NvdXJjZV9jb2RlGC0gASgOMhsubGxtY3RsLnYxLkFjY291bnRpbmdTb3VyY2USNwoXY29uY3VycmVuY3lfc291cmNlX2NvZGUYLiABKA4yFi5sbG1jdGwudjEuTGltaXRTb3VyY2USIQoZc2V0dGxlZF9hdF9lc3RpbWF0ZV90b3RhbBgvIAEoAxIrCgxwbGFuX3dpbmRvd3MYMCADKAsyFS5sbG1jdGwudjEuUGxhbldpbmRvdxISCgpmbGVldF9saW5lGDEgASgIEhcKD2NhbmNlbGxlZF90b3RhbBgyIAEoAxIVCg1zZXR0bGVkX3RvdGFsGDMgASgDEhcKD3dpdGhkcmF3bl90b3RhbBg0IAEoAxIVCg1leHBpcmVkX3RvdGFsGDUgASgDGjIKEExhc3RIZWFkZXJzRW50cnkSCwoDa2V5GAEgASgJEg0KBXZhbHVlGAIgASgJOgI4ASKbAQoKUGxhbldpbmRvdxIMCgRuYW1lGAEgASgJEg0KBWxhYmVsGAIgASgJEgwKBHVzZWQYAyABKAESGQoRcmVzZXRzX2F0X3VuaXhfbXMYBCABKAMSFgoOd2luZG93X21pbnV0ZXMYBSABKAMSDgoGc3RhdHVzGAYgASgJEg4KBmNsb3NlZBgHIAEoCBIPCgdiaW5kaW5nGAggASgIIkgKDENsYWltUmVxdWVzdBILCgNrZXkYASABKAkSDgoGdHRsX21zGAIgASgDEhsKE2FjY2VwdF9sb3N0X2hpc3RvcnkYAyABKAgiqQEKDUNsYWltUmVzcG9uc2USLQoFc3RhdGUYASABKA4yHi5sbG1jdGwudjEuQ2xhaW1SZXNwb25zZS5TdGF0ZRIOCgZyZXN1bHQYAiABKAwSFQoNc2luY2VfdW5peF9tcxgDIAEoAyJCCgVTdGF0ZRIVChFTVEFURV9VTlNQRUNJRklFRBAAEgsKB0NMQUlNRUQQARILCgdQRU5ESU5HEAISCAoERE9ORRADIi4KD0NvbXBsZXRlUmVxdWVzdBILCgNrZXkYASABKAkSDgoGcmVzdWx0GAIgASgMIhIKEENvbXBsZXRlUmVzcG9uc2UiMAoOU2Vzc2lvblJlcXVlc3QSEQoJY2xpZW50X2lkGAEgASgJEgsKA3BpZBgCIAEoBSIhCgxTZXNzaW9uRXZlbnQSEQoJY2xpZW50X2lkGAEgASgJIg0KC1BpbmdSZXF1ZXN0Ig4KDFBpbmdSZXNwb25zZSqCAwoNUmVmdXNhbFJlYXNvbhIeChpSRUZVU0FMX1JFQVNPTl9VTlNQRUNJRklFRBAAEhsKF1JFRlVTQUxfUkVBU09OX0NBUEFDSVRZEAESHgoaUkVGVVNBTF9SRUFTT05fQ09OQ1VSUkVOQ1kQAhIbChdSRUZVU0FMX1JFQVNPTl9DT09MRE9XThADEh8KG1JFRlVTQUxfUkVBU09OX0JSRUFLRVJfT1BFThAEEh0KGVJFRlVTQUxfUkVBU09OX1JVTl9CVURHRVQQBRIeChpSRUZVU0FMX1JFQVNPTl9ST1VURV9HUk9VUBAGEhsKF1JFRlVTQUxfUkVBU09OX1NUT1BQSU5HEAcSHAoYUkVGVVNBTF9SRUFTT05fVE9PX0xBUkdFEAgSHgoaUkVGVVNBTF9SRUFTT05fREFJTFlfUVVPVEEQCRIeChpSRUZVU0FMX1JFQVNPTl9QTEFOX1dJTkRPVxAKEhwKGFJFRlVTQUxfUkVBU09OX0NBTkNFTExFRBALKlAKBkFkdmljZRIWChJBRFZJQ0VfVU5TUEVDSUZJRUQQABIICgRET05FEAESCQoFUkVUUlkQAhILCgdHSVZFX1VQEAMSDAoIRkFMTEJBQ0sQBCqkAgoJRXZlbnRLaW5kEhoKFkVWRU5UX0tJTkRfVU5TUEVDSUZJRUQQABIXChNFVkVOVF9LSU5EX0NPT0xET1dOEAESFgoSRVZFTlRfS0lORF9HSVZFX1VQEAISFwoTRVZFTlRfS0lORF9GQUxMQkFDSxADEhYKEkVWRU5UX0tJTkRfQlJFQUtFUhAEEhYKEkVWRU5UX0tJTkRfRVhQSVJFRBAFEhcKE0VWRU5UX0tJTkRfUkVMRUFTRUQQBhIZChVFVkVOVF9LSU5EX0NBTElCUkFURUQQBxIUChBFVkVOVF9LSU5EX1JFU0VUEAgSGwoXRVZFTlRfS0lORF9SRUNPTkZJR1VSRUQQCRIaChZFVkVOVF9LSU5EX1BMQU5fV0lORE9XEAoqjQEKCURpbWVuc2lvbhIZChVESU1FTlNJT05fVU5TUEVDSUZJRUQQABIWChJESU1FTlNJT05fUkVRVUVTVFMQARIUChBESU1FTlNJT05fVE9LRU5TEAISGgoWRElNRU5TSU9OX0lOUFVUX1RPS0VOUxADEhsKF0RJTUVOU0lPTl9PVVRQVVRfVE9LRU5TEAQqQwoGUGVyaW9kEhYKElBFUklPRF9VTlNQRUNJRklFRBAAEhEKDVBFUklPRF9NSU5VVEUQARIOCgpQRVJJT0RfREFZEAIqdQoLTGltaXRTb3VyY2USHAoYTElNSVRfU09VUkNFX1VOU1BFQ0lGSUVEEAASFwoTTElNSVRfU09VUkNFX0NPTkZJRxABEhgKFExJTUlUX1NPVVJDRV9IRUFERVJTEAISFQoRTElNSVRfU09VUkNFX0FJTUQQAyp8CgxCcmVha2VyU3RhdGUSHQoZQlJFQUtFUl9TVEFURV9VTlNQRUNJRklFRBAAEhgKFEJSRUFLRVJfU1RBVEVfQ0xPU0VEEAESFgoSQlJFQUtFUl9TVEFURV9PUEVOEAISGwoXQlJFQUtFUl9TVEFURV9IQUxGX09QRU4QAyqQAQoIUHJvdmlkZXISGAoUUFJPVklERVJfVU5TUEVDSUZJRUQQABITCg9QUk9WSURFUl9PUEVOQUkQARISCg5QUk9WSURFUl9BWlVSRRACEhYKElBST1ZJREVSX0FOVEhST1BJQxADEhMKD1BST1ZJREVSX0dFTUlOSRAEEhQKEFBST1ZJREVSX0dFTkVSSUMQBSprCg5PdXRwdXRDb3VudGluZxIfChtPVVRQVVRfQ09VTlRJTkdfVU5TUEVDSUZJRUQQABIaChZPVVRQVVRfQ09VTlRJTkdfQUNUVUFMEAESHAoYT1VUUFVUX0NPVU5USU5HX1JFU0VSVkVEEAIqzgEKEEFjY291bnRpbmdTb3VyY2USIQodQUNDT1VOVElOR19TT1VSQ0VfVU5TUEVDSUZJRUQQABIcChhBQ0NPVU5USU5HX1NPVVJDRV9DT05GSUcQARIeChpBQ0NPVU5USU5HX1NPVVJDRV9QUk9WSURFUhACEhsKF0FDQ09VTlRJTkdfU09VUkNFX1VTQUdFEAMSHQoZQUNDT1VOVElOR19TT1VSQ0VfSEVBREVSUxAEEh0KGUFDQ09VTlRJTkdfU09VUkNFX0RFRkFVTFQQBTKaBgoHTGltaXRlchJACgdBY3F1aXJlEhkubGxtY3RsLnYxLkFjcXVpcmVSZXF1ZXN0GhoubGxtY3RsLnYxLkFjcXVpcmVSZXNwb25zZRI9CgZSZXBvcnQSGC5sbG1jdGwudjEuUmVwb3J0UmVxdWVzdBoZLmxsbWN0bC52MS5SZXBvcnRSZXNwb25zZRJDCghDb29sZG93bhIaLmxsbWN0bC52MS5Db29sZG93blJlcXVlc3QaGy5sbG1jdGwudjEuQ29vbGRvd25SZXNwb25zZRI9CgZTdGF0dXMSGC5sbG1jdGwudjEuU3RhdHVzUmVxdWVzdBoZLmxsbWN0bC52MS5TdGF0dXNSZXNwb25zZRI9CgVXYXRjaBIXLmxsbWN0bC52MS5XYXRjaFJlcXVlc3QaGS5sbG1jdGwudjEuU3RhdHVzUmVzcG9uc2UwARI6CgVDbGFpbRIXLmxsbWN0bC52MS5DbGFpbVJlcXVlc3QaGC5sbG1jdGwudjEuQ2xhaW1SZXNwb25zZRJDCghDb21wbGV0ZRIaLmxsbWN0bC52MS5Db21wbGV0ZVJlcXVlc3QaGy5sbG1jdGwudjEuQ29tcGxldGVSZXNwb25zZRI/CgdTZXNzaW9uEhkubGxtY3RsLnYxLlNlc3Npb25SZXF1ZXN0GhcubGxtY3RsLnYxLlNlc3Npb25FdmVudDABEjcKBFBpbmcSFi5sbG1jdGwudjEuUGluZ1JlcXVlc3QaFy5sbG1jdGwudjEuUGluZ1Jlc3BvbnNlEk8KDFNldFJ1bkJ1ZGdldBIeLmxsbWN0bC52MS5TZXRSdW5CdWRnZXRSZXF1ZXN0Gh8ubGxtY3RsLnYxLlNldFJ1bkJ1ZGdldFJlc3BvbnNlEjoKBVJlc2V0EhcubGxtY3RsLnYxLlJlc2V0UmVxdWVzdBoYLmxsbWN0bC52MS5SZXNldFJlc3BvbnNlEkMKCFdpdGhkcmF3EhoubGxtY3RsLnYxLldpdGhkcmF3UmVxdWVzdBobLmxsbWN0bC52MS5XaXRoZHJhd1Jlc3BvbnNlQl8KDWRldi5sbG1jdGwudjFCDExpbWl0ZXJQcm90b1ABWjJnaXRodWIuY29tL2xsbWN0bC9sbG1jdGwvZ2VuL2dvL2xsbWN0bC92MTtsbG1jdGx2MaoCCUxsbWN0bC5WMWIGcHJvdG8z");
var WithdrawRequestSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 0);
var WithdrawResponseSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 1);
var ResetRequestSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 2);
var ResetResponseSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 3);
var AcquireRequestSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 4);
var AcquireResponseSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 5);
var ReportRequestSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 6);
var ReportResponseSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 7);
var CooldownRequestSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 8);
var CooldownResponseSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 9);
var StatusRequestSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 10);
var WatchRequestSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 11);
var StatusResponseSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 12);
var FleetStatusSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 13);
var RunStatusSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 14);
var ClientStatusSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 15);
var SetRunBudgetRequestSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 16);
var SetRunBudgetResponseSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 17);
var EventSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 18);
var BucketSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 19);
var KeyStatusSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 20);
var PlanWindowSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 21);
var ClaimRequestSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 22);
var ClaimResponseSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 23);
var ClaimResponse_State = /* @__PURE__ */ ((ClaimResponse_State2) => {
  ClaimResponse_State2[ClaimResponse_State2["STATE_UNSPECIFIED"] = 0] = "STATE_UNSPECIFIED";
  ClaimResponse_State2[ClaimResponse_State2["CLAIMED"] = 1] = "CLAIMED";
  ClaimResponse_State2[ClaimResponse_State2["PENDING"] = 2] = "PENDING";
  ClaimResponse_State2[ClaimResponse_State2["DONE"] = 3] = "DONE";
  return ClaimResponse_State2;
})(ClaimResponse_State || {});
var ClaimResponse_StateSchema = /* @__PURE__ */ enumDesc(file_llmctl_v1_limiter, 23, 0);
var CompleteRequestSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 24);
var CompleteResponseSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 25);
var SessionRequestSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 26);
var SessionEventSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 27);
var PingRequestSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 28);
var PingResponseSchema = /* @__PURE__ */ messageDesc(file_llmctl_v1_limiter, 29);
var RefusalReason = /* @__PURE__ */ ((RefusalReason2) => {
  RefusalReason2[RefusalReason2["UNSPECIFIED"] = 0] = "UNSPECIFIED";
  RefusalReason2[RefusalReason2["CAPACITY"] = 1] = "CAPACITY";
  RefusalReason2[RefusalReason2["CONCURRENCY"] = 2] = "CONCURRENCY";
  RefusalReason2[RefusalReason2["COOLDOWN"] = 3] = "COOLDOWN";
  RefusalReason2[RefusalReason2["BREAKER_OPEN"] = 4] = "BREAKER_OPEN";
  RefusalReason2[RefusalReason2["RUN_BUDGET"] = 5] = "RUN_BUDGET";
  RefusalReason2[RefusalReason2["ROUTE_GROUP"] = 6] = "ROUTE_GROUP";
  RefusalReason2[RefusalReason2["STOPPING"] = 7] = "STOPPING";
  RefusalReason2[RefusalReason2["TOO_LARGE"] = 8] = "TOO_LARGE";
  RefusalReason2[RefusalReason2["DAILY_QUOTA"] = 9] = "DAILY_QUOTA";
  RefusalReason2[RefusalReason2["PLAN_WINDOW"] = 10] = "PLAN_WINDOW";
  RefusalReason2[RefusalReason2["CANCELLED"] = 11] = "CANCELLED";
  return RefusalReason2;
})(RefusalReason || {});
var RefusalReasonSchema = /* @__PURE__ */ enumDesc(file_llmctl_v1_limiter, 0);
var Advice = /* @__PURE__ */ ((Advice2) => {
  Advice2[Advice2["ADVICE_UNSPECIFIED"] = 0] = "ADVICE_UNSPECIFIED";
  Advice2[Advice2["DONE"] = 1] = "DONE";
  Advice2[Advice2["RETRY"] = 2] = "RETRY";
  Advice2[Advice2["GIVE_UP"] = 3] = "GIVE_UP";
  Advice2[Advice2["FALLBACK"] = 4] = "FALLBACK";
  return Advice2;
})(Advice || {});
var AdviceSchema = /* @__PURE__ */ enumDesc(file_llmctl_v1_limiter, 1);
var EventKind = /* @__PURE__ */ ((EventKind2) => {
  EventKind2[EventKind2["UNSPECIFIED"] = 0] = "UNSPECIFIED";
  EventKind2[EventKind2["COOLDOWN"] = 1] = "COOLDOWN";
  EventKind2[EventKind2["GIVE_UP"] = 2] = "GIVE_UP";
  EventKind2[EventKind2["FALLBACK"] = 3] = "FALLBACK";
  EventKind2[EventKind2["BREAKER"] = 4] = "BREAKER";
  EventKind2[EventKind2["EXPIRED"] = 5] = "EXPIRED";
  EventKind2[EventKind2["RELEASED"] = 6] = "RELEASED";
  EventKind2[EventKind2["CALIBRATED"] = 7] = "CALIBRATED";
  EventKind2[EventKind2["RESET"] = 8] = "RESET";
  EventKind2[EventKind2["RECONFIGURED"] = 9] = "RECONFIGURED";
  EventKind2[EventKind2["PLAN_WINDOW"] = 10] = "PLAN_WINDOW";
  return EventKind2;
})(EventKind || {});
var EventKindSchema = /* @__PURE__ */ enumDesc(file_llmctl_v1_limiter, 2);
var Dimension = /* @__PURE__ */ ((Dimension2) => {
  Dimension2[Dimension2["UNSPECIFIED"] = 0] = "UNSPECIFIED";
  Dimension2[Dimension2["REQUESTS"] = 1] = "REQUESTS";
  Dimension2[Dimension2["TOKENS"] = 2] = "TOKENS";
  Dimension2[Dimension2["INPUT_TOKENS"] = 3] = "INPUT_TOKENS";
  Dimension2[Dimension2["OUTPUT_TOKENS"] = 4] = "OUTPUT_TOKENS";
  return Dimension2;
})(Dimension || {});
var DimensionSchema = /* @__PURE__ */ enumDesc(file_llmctl_v1_limiter, 3);
var Period = /* @__PURE__ */ ((Period2) => {
  Period2[Period2["UNSPECIFIED"] = 0] = "UNSPECIFIED";
  Period2[Period2["MINUTE"] = 1] = "MINUTE";
  Period2[Period2["DAY"] = 2] = "DAY";
  return Period2;
})(Period || {});
var PeriodSchema = /* @__PURE__ */ enumDesc(file_llmctl_v1_limiter, 4);
var LimitSource = /* @__PURE__ */ ((LimitSource2) => {
  LimitSource2[LimitSource2["UNSPECIFIED"] = 0] = "UNSPECIFIED";
  LimitSource2[LimitSource2["CONFIG"] = 1] = "CONFIG";
  LimitSource2[LimitSource2["HEADERS"] = 2] = "HEADERS";
  LimitSource2[LimitSource2["AIMD"] = 3] = "AIMD";
  return LimitSource2;
})(LimitSource || {});
var LimitSourceSchema = /* @__PURE__ */ enumDesc(file_llmctl_v1_limiter, 5);
var BreakerState = /* @__PURE__ */ ((BreakerState2) => {
  BreakerState2[BreakerState2["UNSPECIFIED"] = 0] = "UNSPECIFIED";
  BreakerState2[BreakerState2["CLOSED"] = 1] = "CLOSED";
  BreakerState2[BreakerState2["OPEN"] = 2] = "OPEN";
  BreakerState2[BreakerState2["HALF_OPEN"] = 3] = "HALF_OPEN";
  return BreakerState2;
})(BreakerState || {});
var BreakerStateSchema = /* @__PURE__ */ enumDesc(file_llmctl_v1_limiter, 6);
var Provider = /* @__PURE__ */ ((Provider2) => {
  Provider2[Provider2["UNSPECIFIED"] = 0] = "UNSPECIFIED";
  Provider2[Provider2["OPENAI"] = 1] = "OPENAI";
  Provider2[Provider2["AZURE"] = 2] = "AZURE";
  Provider2[Provider2["ANTHROPIC"] = 3] = "ANTHROPIC";
  Provider2[Provider2["GEMINI"] = 4] = "GEMINI";
  Provider2[Provider2["GENERIC"] = 5] = "GENERIC";
  return Provider2;
})(Provider || {});
var ProviderSchema = /* @__PURE__ */ enumDesc(file_llmctl_v1_limiter, 7);
var OutputCounting = /* @__PURE__ */ ((OutputCounting2) => {
  OutputCounting2[OutputCounting2["UNSPECIFIED"] = 0] = "UNSPECIFIED";
  OutputCounting2[OutputCounting2["ACTUAL"] = 1] = "ACTUAL";
  OutputCounting2[OutputCounting2["RESERVED"] = 2] = "RESERVED";
  return OutputCounting2;
})(OutputCounting || {});
var OutputCountingSchema = /* @__PURE__ */ enumDesc(file_llmctl_v1_limiter, 8);
var AccountingSource = /* @__PURE__ */ ((AccountingSource2) => {
  AccountingSource2[AccountingSource2["UNSPECIFIED"] = 0] = "UNSPECIFIED";
  AccountingSource2[AccountingSource2["CONFIG"] = 1] = "CONFIG";
  AccountingSource2[AccountingSource2["PROVIDER"] = 2] = "PROVIDER";
  AccountingSource2[AccountingSource2["USAGE"] = 3] = "USAGE";
  AccountingSource2[AccountingSource2["HEADERS"] = 4] = "HEADERS";
  AccountingSource2[AccountingSource2["DEFAULT"] = 5] = "DEFAULT";
  return AccountingSource2;
})(AccountingSource || {});
var AccountingSourceSchema = /* @__PURE__ */ enumDesc(file_llmctl_v1_limiter, 9);
var Limiter = /* @__PURE__ */ serviceDesc(file_llmctl_v1_limiter, 0);

// src/errors.ts
var LlmctlError = class extends Error {
  code;
  constructor(message2, code) {
    super(message2);
    this.name = new.target.name;
    this.code = code;
  }
};
var Unavailable = class extends LlmctlError {
  socket;
  constructor(message2, socket) {
    super(message2, "UNAVAILABLE");
    this.socket = socket;
  }
};
var NotGranted = class extends LlmctlError {
  key;
  reason;
  reasonCode;
  notBefore;
  waitedMs;
  constructor(key, reason, reasonCode2, notBefore, waitedMs) {
    const when = notBefore ? `; ask again after ${notBefore.toISOString()}` : "";
    super(`llmctl did not grant ${JSON.stringify(key)} in time: ${reason || "no capacity"}${when}`);
    this.key = key;
    this.reason = reason;
    this.reasonCode = reasonCode2;
    this.notBefore = notBefore;
    this.waitedMs = waitedMs;
  }
  /** Milliseconds from now until `notBefore` (0 once it has passed), or null when unknown. */
  get retryAfterMs() {
    return this.notBefore ? Math.max(0, this.notBefore.getTime() - Date.now()) : null;
  }
};
var RunBudgetExceeded = class extends NotGranted {
  runId;
  constructor(key, reason, notBefore, waitedMs, runId) {
    super(key, reason, "run_budget", notBefore, waitedMs);
    this.runId = runId;
    this.message = `llmctl refused ${JSON.stringify(key)} for run ${JSON.stringify(runId)}: ${reason}`;
  }
};
var InvalidArgument = class extends LlmctlError {
  constructor(message2) {
    super(message2, "INVALID_ARGUMENT");
  }
};
var LeaseNotFound = class extends LlmctlError {
  constructor(message2) {
    super(message2, "NOT_FOUND");
  }
};
var ClaimHistoryLost = class extends LlmctlError {
  constructor(message2) {
    super(message2, "DATA_LOSS");
  }
};
function isNotGranted(err) {
  for (let e = err, depth = 0; e && depth < 8; depth++) {
    if (e instanceof NotGranted) {
      return true;
    }
    e = e.cause;
  }
  return false;
}

// src/session.ts
import * as http22 from "node:http2";
import * as net from "node:net";
var PATH = "/llmctl.v1.Limiter/Session";
var RETRY_MIN_MS = 100;
var RETRY_MAX_MS = 5e3;
var SessionKeeper = class {
  constructor(socket, clientId) {
    this.socket = socket;
    this.clientId = clientId;
    this.open();
  }
  socket;
  clientId;
  session;
  retryMs = RETRY_MIN_MS;
  timer;
  closed = false;
  waiters = [];
  /** Whether the daemon holds the session right now. */
  connected = false;
  /** Called when a session the daemon held ends (it went away, and may have lost its leases). */
  onLost = null;
  /** Resolves true once the session is open, false when `timeoutMs` passes first. */
  waitConnected(timeoutMs) {
    if (this.connected) {
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        resolve(true);
      };
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(done);
    });
  }
  close() {
    this.closed = true;
    clearTimeout(this.timer);
    this.session?.destroy();
    this.session = void 0;
    this.connected = false;
  }
  open() {
    if (this.closed) {
      return;
    }
    const session = http22.connect("http://localhost", {
      createConnection: () => net.connect(this.socket)
    });
    this.session = session;
    session.unref();
    session.on("error", () => this.lost(session));
    session.on("close", () => this.lost(session));
    const stream = session.request({
      ":method": "POST",
      ":path": PATH,
      "content-type": "application/grpc",
      te: "trailers"
    });
    stream.on("data", () => {
      if (!this.connected && this.session === session) {
        this.connected = true;
        this.retryMs = RETRY_MIN_MS;
        for (const w of this.waiters.splice(0)) {
          w();
        }
      }
    });
    stream.on("error", () => this.lost(session));
    stream.on("close", () => this.lost(session));
    const msg = toBinary(SessionRequestSchema, create(SessionRequestSchema, { clientId: this.clientId, pid: process.pid }));
    const frame = Buffer.alloc(5 + msg.length);
    frame.writeUInt8(0, 0);
    frame.writeUInt32BE(msg.length, 1);
    frame.set(msg, 5);
    stream.end(frame);
  }
  /** The session ended: open it again after a pause that grows while the daemon is away. */
  lost(session) {
    if (this.session !== session) {
      return;
    }
    this.session = void 0;
    const wasConnected = this.connected;
    this.connected = false;
    session.destroy();
    if (this.closed) {
      return;
    }
    if (wasConnected) {
      this.onLost?.();
    }
    this.timer = setTimeout(() => this.open(), this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }
};

// src/socket.ts
import * as os from "node:os";
function defaultSocket(env = process.env) {
  if (env.LLMCTL_SOCKET) {
    return env.LLMCTL_SOCKET;
  }
  if (env.XDG_RUNTIME_DIR) {
    return `${env.XDG_RUNTIME_DIR}/llmctl/llmctl.sock`;
  }
  const uid = typeof process.getuid === "function" ? process.getuid() : os.userInfo().uid;
  return `/tmp/llmctl-${uid}/llmctl.sock`;
}

// src/autostart.ts
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net2 from "node:net";
import * as os2 from "node:os";
import * as path from "node:path";
var START_WAIT_MS = 1e4;
var DEFAULT_IDLE_EXIT = "10m";
function answers(socket) {
  return new Promise((resolve) => {
    const s = net2.connect(socket);
    const done = (ok) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(1e3, () => done(false));
    s.once("connect", () => done(true));
    s.once("error", () => done(false));
  });
}
function autostartEnabled(env = process.env) {
  const v = (env.LLMCTL_AUTOSTART ?? "1").trim().toLowerCase();
  return !["0", "false", "no", "off"].includes(v);
}
function executable(p) {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
function findBinary(env = process.env) {
  const dirs = [...env.VIRTUAL_ENV ? [path.join(env.VIRTUAL_ENV, "bin")] : [], ...(env.PATH ?? "").split(path.delimiter)];
  for (const d of dirs) {
    if (d && executable(path.join(d, "llmctl"))) {
      return path.join(d, "llmctl");
    }
  }
  return null;
}
function stateDir(env = process.env) {
  return path.join(env.XDG_STATE_HOME || path.join(os2.homedir(), ".local", "state"), "llmctl");
}
var sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function ensureDaemon(socket, env = process.env) {
  if (await answers(socket)) {
    return true;
  }
  const binary = findBinary(env);
  if (binary === null) {
    process.emitWarning(
      `llmctl: no daemon on ${socket} and no llmctl binary on PATH to start one; install it with \`pip install "llmctl-client[daemon]"\`, or start one with \`llmctl daemon\``
    );
    return false;
  }
  const dir = stateDir(env);
  const logPath = path.join(dir, "daemon.log");
  let log;
  try {
    fs.mkdirSync(dir, { recursive: true });
    log = fs.openSync(logPath, "a");
  } catch (e) {
    process.emitWarning(`llmctl: cannot write the daemon's log under ${dir}: ${String(e)}`);
    return false;
  }
  try {
    const child = spawn(binary, ["daemon", "--socket", socket, "--idle-exit", env.LLMCTL_AUTOSTART_IDLE_EXIT || DEFAULT_IDLE_EXIT], {
      detached: true,
      stdio: ["ignore", "ignore", log]
    });
    child.once("error", () => {
    });
    child.unref();
  } finally {
    fs.closeSync(log);
  }
  const deadline = Date.now() + START_WAIT_MS;
  while (Date.now() < deadline) {
    if (await answers(socket)) {
      return true;
    }
    await sleep(20);
  }
  process.emitWarning(`llmctl: the daemon started on ${socket} did not answer within ${START_WAIT_MS / 1e3} s; see ${logPath}`);
  return false;
}

// src/failstatic.ts
var RESTART_WAIT_MS = 5e3;
var FAIL_STATIC_FOR_MS = 6e4;
var WINDOW_MS = 1e4;
var MAX_GRANTS = 4096;
var MAX_KEYS = 1024;
function outagePhase(outageMs, answered2, failStaticForMs = FAIL_STATIC_FOR_MS) {
  if (!answered2) return "open";
  if (outageMs < RESTART_WAIT_MS) return "wait";
  if (outageMs < failStaticForMs) return "static";
  return "open";
}
function staticLimits(grantsAgoMs, inFlightMax) {
  const ago = grantsAgoMs.filter((g) => g >= 0 && g <= WINDOW_MS).sort((a, b) => a - b);
  if (ago.length === 0) return null;
  const span = Math.min(Math.max(ago[ago.length - 1], 1e3), WINDOW_MS) / 1e3;
  let rate = ago.length / span;
  const gaps = ago.slice(1).map((g, i) => (g - ago[i]) / 1e3).sort((a, b) => a - b);
  if (gaps.length > 0) {
    const mid = Math.floor(gaps.length / 2);
    const median = gaps.length % 2 ? gaps[mid] : (gaps[mid - 1] + gaps[mid]) / 2;
    if (median > 0) rate = Math.min(rate, 1 / median);
  }
  return { ratePerS: rate, burst: Math.max(1, Math.floor(rate)), concurrency: Math.max(1, inFlightMax) };
}
var FailStatic = class {
  keys = /* @__PURE__ */ new Map();
  key(name) {
    let k = this.keys.get(name);
    if (!k) {
      if (this.keys.size >= MAX_KEYS) {
        const oldest = [...this.keys.entries()].filter(([, v]) => v.inFlight === 0).sort((a, b) => (a[1].grants.at(-1) ?? 0) - (b[1].grants.at(-1) ?? 0))[0];
        if (oldest) this.keys.delete(oldest[0]);
      }
      k = { grants: [], peaks: [], inFlight: 0, bucket: null };
      this.keys.set(name, k);
    }
    return k;
  }
  /** A lease on `name` began: granted by the daemon, or by the static phase. */
  granted(name, now, byDaemon = true) {
    const k = this.key(name);
    k.inFlight += 1;
    if (byDaemon) {
      k.grants.push(now);
      k.peaks.push([now, k.inFlight]);
      if (k.grants.length > MAX_GRANTS) k.grants.shift();
      if (k.peaks.length > MAX_GRANTS) k.peaks.shift();
    }
  }
  /** A lease on `name` ended. */
  released(name) {
    const k = this.keys.get(name);
    if (k && k.inFlight > 0) k.inFlight -= 1;
  }
  limits(k, outageStart) {
    const peak = Math.max(0, ...k.peaks.filter(([t]) => outageStart - t >= 0 && outageStart - t <= WINDOW_MS).map(([, n]) => n));
    return staticLimits(
      k.grants.map((t) => outageStart - t),
      peak
    );
  }
  /** In the static phase: 0 when a call on `name` may go now (counted in flight), else how many
   * ms to wait before asking again; null when `name` is not limited (nothing known). */
  take(name, outageStart, now) {
    const k = this.keys.get(name);
    if (!k) return null;
    if (!k.bucket || k.bucket.start !== outageStart) {
      const limits = this.limits(k, outageStart);
      if (!limits) return null;
      k.bucket = { start: outageStart, limits, level: limits.burst, last: now };
    }
    const b = k.bucket;
    b.level = Math.min(b.limits.burst, b.level + (now - b.last) / 1e3 * b.limits.ratePerS);
    b.last = now;
    if (k.inFlight >= b.limits.concurrency) return 50;
    if (b.level >= 1) {
      b.level -= 1;
      k.inFlight += 1;
      return 0;
    }
    return (1 - b.level) / b.limits.ratePerS * 1e3;
  }
};

// src/report.ts
var LIMIT_HEADER_PREFIXES = ["x-ratelimit-", "anthropic-ratelimit-", "ratelimit", "x-codex-"];
var RETRY_HEADERS = /* @__PURE__ */ new Set(["retry-after", "retry-after-ms", "x-ms-retry-after-ms", "x-should-retry"]);
var MAX_HEADERS = 64;
function limitHeaders(h) {
  const out = {};
  if (!h) {
    return out;
  }
  let entries;
  if (h instanceof Headers) {
    const pairs = [];
    h.forEach((value, name) => pairs.push([name, value]));
    entries = pairs;
  } else if (Symbol.iterator in h) {
    entries = h;
  } else {
    entries = Object.entries(h);
  }
  for (const [name, value] of entries) {
    const n = name.toLowerCase();
    if (!(RETRY_HEADERS.has(n) || LIMIT_HEADER_PREFIXES.some((p) => n.startsWith(p)))) {
      continue;
    }
    const v = Array.isArray(value) ? value.join(", ") : value;
    if (typeof v === "string" && Object.keys(out).length < MAX_HEADERS) {
      out[n] = v;
    }
  }
  return out;
}
var CANCELLED = "cancelled";
var FAIL_OPEN_ATTEMPTS = 4;
var RETRYABLE = /* @__PURE__ */ new Set([408, 409, 429, 500, 502, 503, 504, 529]);
var QUOTA_WORDS = ["insufficient_quota", "billing", "spend", "credit", "quota_exhausted"];
function localAdvice(o, attempt) {
  const type = (o.errorType ?? "").toLowerCase();
  if (QUOTA_WORDS.some((w) => type.includes(w))) {
    return { action: "give_up", retryAfterMs: 0, fallbackKey: "", reason: `quota or spend cap exhausted (${type}) (daemon unreachable)` };
  }
  if (o.status >= 200 && o.status < 300 && !type) {
    return { action: "done", retryAfterMs: 0, fallbackKey: "", reason: "" };
  }
  if (type === CANCELLED && (o.status === 0 || o.status >= 200 && o.status < 300)) {
    return { action: "give_up", retryAfterMs: 0, fallbackKey: "", reason: "the caller gave up on the request" };
  }
  let retryable = o.status === 0 || RETRYABLE.has(o.status) || o.status >= 500;
  if (o.status >= 200 && o.status < 300) {
    retryable = !o.streamStarted && (type.includes("overloaded") || type.includes("rate_limit"));
  }
  if (!retryable || attempt >= FAIL_OPEN_ATTEMPTS) {
    return { action: "give_up", retryAfterMs: 0, fallbackKey: "", reason: `status ${o.status} (daemon unreachable)` };
  }
  const h = limitHeaders(o.headers);
  const header = Math.min(6e4, Number(h["retry-after-ms"] ?? NaN) || Number(h["retry-after"] ?? NaN) * 1e3);
  const backoff = Math.min(3e4, 1e3 * 2 ** (attempt - 1)) * Math.random();
  return {
    action: "retry",
    retryAfterMs: Math.max(Number.isFinite(header) ? header : 0, backoff),
    fallbackKey: "",
    reason: `status ${o.status} (daemon unreachable)`
  };
}
function usageOf(body) {
  if (!body || typeof body !== "object") {
    return null;
  }
  const b = body;
  return parseUsage(b.usage ?? b.usageMetadata);
}
function parseUsage(u) {
  if (!u || typeof u !== "object") {
    return null;
  }
  const o = u;
  const int = (v) => typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null;
  const sub = (v, k) => v && typeof v === "object" ? v[k] : void 0;
  const prompt = int(o.prompt_tokens);
  if (prompt !== null) {
    const cached2 = int(sub(o.prompt_tokens_details, "cached_tokens")) ?? 0;
    return [prompt, Math.min(cached2, prompt), int(o.completion_tokens) ?? 0];
  }
  const gp = int(o.promptTokenCount);
  if (gp !== null) {
    return [gp, Math.min(int(o.cachedContentTokenCount) ?? 0, gp), (int(o.candidatesTokenCount) ?? 0) + (int(o.thoughtsTokenCount) ?? 0)];
  }
  const inp = int(o.input_tokens);
  const out = int(o.output_tokens);
  if (inp === null && out === null) {
    return null;
  }
  const read = int(o.cache_read_input_tokens);
  const written = int(o.cache_creation_input_tokens);
  if (read !== null || written !== null) {
    return [(inp ?? 0) + (read ?? 0) + (written ?? 0), read ?? 0, out ?? 0];
  }
  const cached = int(sub(o.input_tokens_details, "cached_tokens")) ?? 0;
  return [inp ?? 0, Math.min(cached, inp ?? 0), out ?? 0];
}

// src/wire.ts
import * as os3 from "node:os";
import { randomBytes } from "node:crypto";
function newClientId() {
  return `${os3.hostname()}-${process.pid}-${randomBytes(4).toString("hex")}`;
}
function count(name, v, dflt) {
  const n = v ?? dflt;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new InvalidArgument(`${name} must be a whole number of 0 or more, not ${String(v)}`);
  }
  return BigInt(n);
}
function reasonCode(code) {
  switch (code) {
    case 1 /* CAPACITY */:
      return "capacity";
    case 2 /* CONCURRENCY */:
      return "concurrency";
    case 3 /* COOLDOWN */:
      return "cooldown";
    case 4 /* BREAKER_OPEN */:
      return "breaker_open";
    case 5 /* RUN_BUDGET */:
      return "run_budget";
    case 6 /* ROUTE_GROUP */:
      return "route_group";
    case 7 /* STOPPING */:
      return "stopping";
    case 8 /* TOO_LARGE */:
      return "too_large";
    case 9 /* DAILY_QUOTA */:
      return "daily_quota";
    case 10 /* PLAN_WINDOW */:
      return "plan_window";
    case 11 /* CANCELLED */:
      return "cancelled";
    case 0 /* UNSPECIFIED */:
      return "";
    default:
      return `${Number(code)}`;
  }
}
function unixMs(v) {
  if (v === void 0) {
    return 0;
  }
  const ms = v instanceof Date ? v.getTime() : v;
  if (!Number.isFinite(ms) || ms < 1e11 || ms > 1e14) {
    throw new InvalidArgument(`firstAttempt must be a Date or Unix milliseconds (like Date.now()), not ${String(v)}`);
  }
  return Math.round(ms);
}
function int32(name, v, dflt) {
  const n = v ?? dflt;
  if (!Number.isInteger(n) || n < -(2 ** 31) || n >= 2 ** 31) {
    throw new InvalidArgument(`${name} must be a whole number (a 32-bit one), not ${String(v)}`);
  }
  return n;
}
var MAX_NAME_BYTES = 256;
function checkName(name, v) {
  if (Buffer.byteLength(v) > MAX_NAME_BYTES || /[\u0000-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/.test(v)) {
    throw new InvalidArgument(`${name} ${JSON.stringify(v.slice(0, 64))} must be at most ${MAX_NAME_BYTES} bytes of visible characters`);
  }
  return v;
}
function fromUnixMs(ms) {
  return ms > 0n ? new Date(Number(ms)) : null;
}
function translate(e, socket) {
  if (!(e instanceof ConnectError)) {
    return e;
  }
  if (unreachable(e)) {
    return new Unavailable(`no llmctl daemon answered on ${socket}: ${e.rawMessage}`, socket);
  }
  switch (e.code) {
    case Code.InvalidArgument:
      return new InvalidArgument(e.rawMessage);
    case Code.NotFound:
      return new LeaseNotFound(e.rawMessage);
    case Code.DataLoss:
      return new ClaimHistoryLost(e.rawMessage);
    default:
      return new LlmctlError(e.rawMessage, Code[e.code]?.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase());
  }
}
var SOCKET_ERRORS = /* @__PURE__ */ new Set(["ENOENT", "ECONNREFUSED", "ECONNRESET", "EPIPE", "ENOTSOCK", "ENOTDIR", "EACCES"]);
function unreachable(e) {
  if (!(e instanceof ConnectError)) {
    return false;
  }
  const cause = e.cause?.code;
  return e.code === Code.Unavailable || e.code === Code.DeadlineExceeded || e.code === Code.Canceled && /stream closed|CANCEL/.test(e.rawMessage) || /REFUSED_STREAM/.test(e.rawMessage) || typeof cause === "string" && SOCKET_ERRORS.has(cause);
}
var ACTIONS = {
  [1 /* DONE */]: "done",
  [2 /* RETRY */]: "retry",
  [3 /* GIVE_UP */]: "give_up",
  [4 /* FALLBACK */]: "fallback"
};
function adviceOf(r) {
  return {
    action: ACTIONS[r.advice] ?? "unknown",
    retryAfterMs: Number(r.retryAfterMs),
    fallbackKey: r.fallbackKey,
    reason: r.reason
  };
}

// src/lease.ts
var Lease = class {
  constructor(client, key, leaseId, limited, waitedMs, expiresAt, attempt, firstAttemptMs) {
    this.client = client;
    this.key = key;
    this.leaseId = leaseId;
    this.limited = limited;
    this.waitedMs = waitedMs;
    this.expiresAt = expiresAt;
    this.attempt = attempt;
    this.firstAttemptMs = firstAttemptMs;
  }
  client;
  key;
  leaseId;
  limited;
  waitedMs;
  expiresAt;
  attempt;
  firstAttemptMs;
  done = false;
  /** @internal Called once, at the first report: the client counts its leases in flight per key. */
  onDone = null;
  /** @internal Called once the daemon took the report (or no report is to be sent): the lease
   * is then no longer the client's to settle if it is dropped. */
  onSettled = null;
  /** @internal The client's epoch when the lease was granted. */
  epoch = 0;
  settled() {
    const f = this.onSettled;
    this.onSettled = null;
    f?.();
  }
  get reported() {
    return this.done;
  }
  /** Settles the lease with what happened and returns the daemon's advice. */
  async report(o) {
    if (this.done) {
      throw new LlmctlError(`lease ${this.leaseId} was reported already`);
    }
    if (!Number.isInteger(o.status) || o.status < 0 || o.status > 999) {
      throw new InvalidArgument(`status must be an HTTP status (or 0 for no answer), not ${String(o.status)}`);
    }
    const attempt = int32("attempt", o.attempt, this.attempt);
    const given = o.inputTokens !== void 0 || o.outputTokens !== void 0;
    const req = {
      leaseId: this.leaseId,
      statusCode: o.status,
      headers: limitHeaders(o.headers),
      inputTokens: count("inputTokens", o.inputTokens, 0),
      cachedInputTokens: count("cachedInputTokens", o.cachedInputTokens, 0),
      outputTokens: count("outputTokens", o.outputTokens, 0),
      errorType: o.errorType ?? "",
      errorMessage: o.errorMessage ?? "",
      streamStarted: o.streamStarted ?? false,
      attempt,
      usageKnown: o.usageKnown ?? given,
      firstAttemptUnixMs: BigInt(this.firstAttemptMs),
      answeredUnixMs: count("answeredUnixMs", o.answeredUnixMs, 0)
    };
    this.done = true;
    const onDone = this.onDone;
    this.onDone = null;
    onDone?.();
    if (!this.limited) {
      this.settled();
      return localAdvice(o, attempt);
    }
    try {
      const advice = await this.client.sendReport(req, o, attempt, this.epoch);
      this.settled();
      return advice;
    } catch (e) {
      if (!(e instanceof LeaseNotFound)) {
        this.done = false;
      } else {
        this.settled();
      }
      throw e;
    }
  }
  /** Reports from a fetch `Response` (status and headers; read usage from its body yourself, or
   * use `limitedFetch`), or from an SDK result with `.usage` (a success). */
  async reportResponse(response) {
    if (response instanceof Response) {
      return this.report({ status: response.status, headers: response.headers });
    }
    const usage = usageOf(response);
    if (usage) {
      return this.report({ status: 200, inputTokens: usage[0], cachedInputTokens: usage[1], outputTokens: usage[2] });
    }
    return this.report({ status: 200 });
  }
};

// src/types.ts
var MAX_WAIT_MS = 36e5;

// src/client.ts
var WARN_EVERY_MS = 6e4;
var WITHDRAW_TIMEOUT_MS = 5e3;
function stopping(resp) {
  return !resp.granted && resp.reasonCode === 7 /* STOPPING */;
}
var Client = class {
  socket;
  failMode;
  clientId;
  rpc;
  session;
  callTimeoutMs;
  warnedAt = null;
  closed = false;
  /** Whether the last acquire was limited by the daemon (null before any): false while failing
   * open, so a wrong socket or a stopped daemon does not go unnoticed. */
  limited = null;
  /** Settles once a daemon started on first use answers (at once when none is started). */
  ready;
  /** Whether the daemon ever answered this client, and since when it has not (null: it does). */
  answered = false;
  downSince = null;
  /** @internal Bumped whenever the daemon may have lost its leases (it went away): a lease
   * from an earlier epoch that the daemon no longer knows was lost, not misused. */
  epoch = 0;
  /** What this client knows of each key, to limit with while the daemon is away. */
  static = new FailStatic();
  /** Leases granted and not yet reported: one its caller drops (a promise never awaited, a lease
   * or a response left unread) is reported cancelled when it is collected, not held to its TTL. */
  unreported = new FinalizationRegistry((d) => void this.settleDropped(d));
  failStaticForMs;
  constructor(options = {}) {
    this.socket = options.socket ?? defaultSocket();
    this.ready = options.socket === void 0 && autostartEnabled() ? ensureDaemon(this.socket) : Promise.resolve();
    this.failMode = options.failMode ?? "open";
    this.failStaticForMs = options.failStaticFor ?? FAIL_STATIC_FOR_MS;
    if (!Number.isFinite(this.failStaticForMs) || this.failStaticForMs < 0) {
      throw new InvalidArgument(`failStaticFor is in milliseconds, 0 or more; got ${String(options.failStaticFor)}`);
    }
    if (this.failMode !== "open" && this.failMode !== "closed") {
      throw new InvalidArgument(`failMode must be "open" or "closed", not ${JSON.stringify(this.failMode)}`);
    }
    this.clientId = checkName("clientId", options.clientId ?? newClientId());
    this.callTimeoutMs = options.callTimeoutMs ?? 1e4;
    const transport = createGrpcTransport({
      baseUrl: "http://localhost",
      nodeOptions: { createConnection: () => net3.connect(this.socket) }
    });
    this.rpc = createClient(Limiter, transport);
    this.session = new SessionKeeper(this.socket, this.clientId);
    this.session.onLost = () => {
      this.epoch += 1;
    };
  }
  /** Whether the Session with the daemon is open right now. */
  get connected() {
    return this.session.connected;
  }
  /** Resolves true once the Session is open, false when `timeoutMs` passes first. */
  waitConnected(timeoutMs = 1e4) {
    this.checkOpen();
    return this.session.waitConnected(timeoutMs);
  }
  /** Ends the Session (the daemon releases this client's slots). */
  close() {
    this.closed = true;
    this.session.close();
  }
  checkOpen() {
    if (this.closed) {
      throw new LlmctlError("this llmctl Client is closed; create a new one");
    }
  }
  failOpen(e, stopping2 = false) {
    if (this.failMode !== "open" || !(stopping2 || unreachable(e))) {
      return false;
    }
    if (this.downSince === null) {
      this.downSince = Date.now();
      this.epoch += 1;
    }
    const now = Date.now();
    if (this.warnedAt === null || now - this.warnedAt >= WARN_EVERY_MS) {
      this.warnedAt = now;
      const why = e instanceof Error ? e.message : String(e);
      const what = this.answered ? `calls wait up to ${RESTART_WAIT_MS / 1e3} s for it to come back, then are limited with what this client last knew of each key for up to ${this.failStaticForMs / 1e3} s, then go unlimited until it is back` : "calls go unlimited until it is back";
      process.emitWarning(`llmctl: no daemon answering on ${this.socket} (${why}); ${what} (failMode "open")`);
    }
    return true;
  }
  /** Reserves capacity on `key` (and its ancestors), waiting in the daemon up to `maxWait` ms.
   * Throws `NotGranted` (or `RunBudgetExceeded`) when capacity will not come in time. */
  async acquire(key, options = {}) {
    this.checkOpen();
    await this.ready;
    const maxWait = options.maxWait ?? MAX_WAIT_MS;
    if (!Number.isFinite(maxWait) || maxWait < 0 || maxWait > MAX_WAIT_MS) {
      throw new InvalidArgument(`maxWait is in milliseconds, from 0 to ${MAX_WAIT_MS}; got ${String(options.maxWait)}`);
    }
    const attempt = int32("attempt", options.attempt, 1);
    const firstMs = unixMs(options.firstAttempt);
    const req = {
      key: key ?? "",
      requests: count("requests", options.requests, 1),
      inputTokens: count("inputTokens", options.inputTokens, 0),
      outputTokens: count("outputTokens", options.outputTokens, 0),
      priority: int32("priority", options.priority, 0),
      maxWaitMs: BigInt(Math.ceil(maxWait)),
      clientId: this.clientId,
      runId: checkName("runId", options.runId ?? ""),
      // Set only when given (optional on the wire: not set is none).
      routeGroup: options.routeGroup || void 0,
      profile: options.profile || void 0,
      outputTokensDeclared: options.outputTokensDeclared,
      // What Withdraw names when the caller aborts while the call waits.
      acquireId: randomBytes2(16).toString("hex")
    };
    const call = () => this.acquireWithdrawable(req, maxWait + this.callTimeoutMs, options.signal);
    let resp = null;
    let epoch = this.epoch;
    for (; ; ) {
      epoch = this.epoch;
      try {
        resp = await call();
      } catch (e) {
        if (options.signal?.aborted) {
          throw options.signal.reason;
        }
        if (!this.failOpen(e)) {
          throw translate(e, this.socket);
        }
      }
      if (resp !== null && stopping(resp) && this.failMode === "open") {
        this.failOpen(Object.assign(new Error("the daemon is stopping"), { code: "UNAVAILABLE_STOPPING" }), true);
        resp = null;
      }
      if (resp === null) {
        resp = await this.afterRestart(call, options.signal);
      }
      if (resp === null && this.phase() !== "up") {
        const name = key ?? options.routeGroup ?? "";
        const turn = await this.staticTurn(name, maxWait, options.signal);
        if (turn !== "back") {
          this.limited = false;
          const lease2 = new Lease(this, name, "", false, 0, null, attempt, firstMs);
          if (turn === "paced") lease2.onDone = () => this.static.released(name);
          return lease2;
        }
      }
      if (resp !== null) break;
    }
    this.answered = true;
    this.downSince = null;
    this.limited = true;
    const asked = resp.key || key || options.routeGroup || "";
    if (!resp.granted) {
      const notBefore = fromUnixMs(resp.notBeforeUnixMs);
      const waited = Number(resp.waitedMs);
      if (resp.reasonCode === 5 /* RUN_BUDGET */) {
        throw new RunBudgetExceeded(asked, resp.reason, notBefore, waited, req.runId);
      }
      throw new NotGranted(asked, resp.reason, reasonCode(resp.reasonCode), notBefore, waited);
    }
    const lease = new Lease(this, asked, resp.leaseId, true, Number(resp.waitedMs), fromUnixMs(resp.expiresUnixMs), attempt, firstMs);
    lease.epoch = epoch;
    this.static.granted(asked, Date.now());
    const dropped = { key: asked, leaseId: resp.leaseId, epoch, released: false };
    this.unreported.register(lease, dropped, lease);
    lease.onDone = () => this.release(dropped);
    lease.onSettled = () => this.unreported.unregister(lease);
    return lease;
  }
  /** Settles a lease its caller dropped unreported. Nobody can say whether its request was
   * sent, so it counts as made (its concurrency slot freed, its tokens at the estimate), never
   * as a refusal. */
  /** A lease's place among this client's leases in flight on its key, given back once. */
  release(d) {
    if (!d.released) {
      d.released = true;
      this.static.released(d.key);
    }
  }
  async settleDropped(d) {
    this.release(d);
    if (this.closed || d.epoch !== this.epoch) {
      return;
    }
    try {
      await this.rpc.report(
        { leaseId: d.leaseId, statusCode: 0, errorType: CANCELLED, errorMessage: "the lease was dropped unreported" },
        { timeoutMs: this.callTimeoutMs }
      );
    } catch {
    }
  }
  /** One Acquire call that an abort gives up on without leaving anything behind: the caller's
   * promise is rejected at once with the signal's reason, the wait is withdrawn (Withdraw by
   * its acquire id), and a grant the call brings as it ends is given back (Withdraw by its
   * lease id); the call itself is cut only when the daemon does not answer the withdrawal. */
  acquireWithdrawable(req, timeoutMs, signal) {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const cut = new AbortController();
    const answer = this.rpc.acquire(req, { timeoutMs, signal: cut.signal });
    if (!signal) return answer;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        reject(signal.reason);
        void this.giveBack(req.acquireId, answer, cut);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      answer.then(
        (r) => {
          signal.removeEventListener("abort", onAbort);
          resolve(r);
        },
        (e) => {
          signal.removeEventListener("abort", onAbort);
          reject(e);
        }
      );
    });
  }
  /** Withdraws an abandoned wait and gives back the grant its call brings, if any. */
  async giveBack(acquireId, answer, cut) {
    const timer = setTimeout(() => cut.abort(), WITHDRAW_TIMEOUT_MS);
    try {
      await this.rpc.withdraw({ acquireId }, { timeoutMs: WITHDRAW_TIMEOUT_MS });
      const r = await answer;
      if (r.granted) await this.rpc.withdraw({ leaseId: r.leaseId }, { timeoutMs: WITHDRAW_TIMEOUT_MS });
    } catch {
      cut.abort();
    } finally {
      clearTimeout(timer);
    }
  }
  /** The phase of the daemon's absence (conformance/fail_static.json), "up" while it answers. */
  phase() {
    if (this.downSince === null) return "up";
    return outagePhase(Date.now() - this.downSince, this.answered, this.failStaticForMs);
  }
  /** While the daemon is away past its restart: waits for `name`'s turn at the rate and
   * concurrency this client was getting on it, up to `maxWaitMs`: whether the call was paced
   * and counted in flight ("paced"), not limited ("unlimited": nothing known of the key, or
   * past failStaticFor), or the daemon is back ("back": ask it). */
  async staticTurn(name, maxWaitMs, signal) {
    const giveUp = Date.now() + maxWaitMs;
    while (this.phase() === "static" && this.downSince !== null) {
      const now = Date.now();
      const delay = this.static.take(name, this.downSince, now);
      if (delay === null) return "unlimited";
      if (delay === 0) return "paced";
      if (now + delay > giveUp) {
        throw new NotGranted(
          name,
          `the llmctl daemon on ${this.socket} is away, and what this client last knew of the key (its grant rate and concurrency) allows no call within maxWait`,
          "fail_static",
          null,
          maxWaitMs - (giveUp - now)
        );
      }
      if (signal?.aborted) throw signal.reason;
      await new Promise((r) => setTimeout(r, Math.min(delay, 100)));
    }
    return this.phase() === "up" ? "back" : "unlimited";
  }
  /** The answer of a daemon that answered this client before and went away less than
   * `RESTART_WAIT_MS` ago (restarting, most likely), once it is back, so that a restart sends
   * no call unlimited; null when it is not back in time. */
  async afterRestart(call, signal) {
    while (this.phase() === "wait") {
      if (signal?.aborted) {
        throw signal.reason;
      }
      if (await answers(this.socket)) {
        try {
          const resp = await call();
          if (!stopping(resp)) {
            return resp;
          }
        } catch (e) {
          if (signal?.aborted) {
            throw signal.reason;
          }
          if (!unreachable(e)) {
            throw translate(e, this.socket);
          }
        }
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    return null;
  }
  /** @internal Sends a lease's report. */
  async sendReport(req, o, attempt, epoch = this.epoch) {
    try {
      const r = await this.rpc.report(req, { timeoutMs: this.callTimeoutMs });
      this.answered = true;
      this.downSince = null;
      return adviceOf(r);
    } catch (e) {
      if (this.failOpen(e)) {
        return localAdvice(o, attempt);
      }
      const err = translate(e, this.socket);
      if (err instanceof LeaseNotFound && this.failMode === "open" && epoch !== this.epoch) {
        return localAdvice(o, attempt);
      }
      throw err;
    }
  }
  /** Stops granting on `key` (and below it) for `ms`; never shortens a cooldown. Resolves to
   * when it ends (null with fail-open and no daemon). */
  async cooldown(key, ms, reason = "") {
    this.checkOpen();
    await this.ready;
    try {
      const r = await this.rpc.cooldown({ key, durationMs: count("ms", ms, 0), reason }, { timeoutMs: this.callTimeoutMs });
      return fromUnixMs(r.untilUnixMs);
    } catch (e) {
      if (this.failOpen(e)) {
        return null;
      }
      throw translate(e, this.socket);
    }
  }
  /** The daemon's state: keys, buckets, cooldowns, sessions, runs, clients. */
  async status(keyPrefix = "") {
    this.checkOpen();
    await this.ready;
    try {
      return await this.rpc.status({ keyPrefix }, { timeoutMs: this.callTimeoutMs });
    } catch (e) {
      throw translate(e, this.socket);
    }
  }
  /** Claims a job by its idempotency key: "claimed" (do it, then `complete`), "pending" (someone
   * else is doing it), or "done" with the stored result. */
  async claim(key, options = {}) {
    this.checkOpen();
    await this.ready;
    try {
      const r = await this.rpc.claim(
        { key, ttlMs: count("ttlMs", options.ttlMs, 6e5), acceptLostHistory: options.acceptLostHistory ?? false },
        { timeoutMs: this.callTimeoutMs }
      );
      switch (r.state) {
        case 1 /* CLAIMED */:
          return { state: "claimed" };
        case 2 /* PENDING */:
          return { state: "pending", since: fromUnixMs(r.sinceUnixMs) ?? void 0 };
        case 3 /* DONE */:
          return { state: "done", result: r.result };
        default:
          throw new LlmctlError(`the daemon answered claim state ${r.state}`);
      }
    } catch (e) {
      throw translate(e, this.socket);
    }
  }
  /** Stores the result of a claimed job and marks it done. */
  async complete(key, result = new Uint8Array()) {
    this.checkOpen();
    await this.ready;
    const bytes = typeof result === "string" ? new TextEncoder().encode(result) : result;
    try {
      await this.rpc.complete({ key, result: bytes }, { timeoutMs: this.callTimeoutMs });
    } catch (e) {
      throw translate(e, this.socket);
    }
  }
};

// src/estimate.ts
var CHARS_PER_TOKEN = 4;
var TOKENS_PER_MESSAGE = 3;
var IMAGE_TOKENS = 1e3;
var DEFAULT_OUTPUT_TOKENS = 4096;
var TEXT_FIELDS = ["messages", "system", "prompt", "input", "instructions", "contents", "tools", "functions"];
var SKIP_KEYS = /* @__PURE__ */ new Set(["type", "role", "id", "tool_use_id", "tool_call_id", "call_id", "cache_control", "signature", "status"]);
var MEDIA_WORDS = ["image", "audio", "file", "document"];
var MEDIA_KEYS = ["image", "document", "video", "audio"];
function isObject2(v) {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
function whole(v) {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null;
}
function estimateBody(body) {
  if (typeof body === "string") {
    try {
      body = body ? JSON.parse(body) : {};
    } catch {
      body = {};
    }
  }
  const b = body && typeof body === "object" && !Array.isArray(body) ? body : {};
  let chars = 0;
  let media = 0;
  const walk = (v, depth) => {
    if (depth > 64) {
      return;
    }
    if (typeof v === "string") {
      chars += v.length;
    } else if (Array.isArray(v)) {
      for (const x of v) {
        walk(x, depth + 1);
      }
    } else if (v && typeof v === "object") {
      const o = v;
      if (typeof o.type === "string" && MEDIA_WORDS.some((w) => o.type.includes(w)) || "inline_data" in o || "inlineData" in o || MEDIA_KEYS.some((k) => isObject2(o[k]) && "source" in o[k])) {
        media += 1;
        return;
      }
      for (const [k, x] of Object.entries(o)) {
        if (!SKIP_KEYS.has(k)) {
          walk(x, depth + 1);
        }
      }
    }
  };
  for (const f of TEXT_FIELDS) {
    if (f in b) {
      walk(b[f], 0);
    }
  }
  const messages = Array.isArray(b.messages) ? b.messages.length : 0;
  const input = Math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * messages + IMAGE_TOKENS * media;
  let output = whole(b.max_tokens) ?? whole(b.max_completion_tokens) ?? whole(b.max_output_tokens);
  if (output === null) {
    const gen = b.generationConfig ?? b.generation_config;
    output = gen && typeof gen === "object" ? whole(gen.maxOutputTokens ?? gen.max_output_tokens) : null;
  }
  if (output === null) {
    const inference = b.inferenceConfig;
    output = isObject2(inference) ? whole(inference.maxTokens) : null;
  }
  const outputDeclared = output !== null;
  output ??= DEFAULT_OUTPUT_TOKENS;
  const n = whole(b.n);
  if (n !== null && n > 1) {
    output *= n;
  }
  return {
    model: typeof b.model === "string" ? b.model : "",
    inputTokens: Math.max(1, input),
    outputTokens: output,
    stream: b.stream === true,
    outputDeclared
  };
}
function estimateRequest(raw) {
  return raw ? estimateBody(raw) : { model: "", inputTokens: 1, outputTokens: DEFAULT_OUTPUT_TOKENS, outputDeclared: false, stream: false };
}

// src/eventstream.ts
var CONTENT_TYPE = "application/vnd.amazon.eventstream";
var MAX_FRAME = 16 << 20;
var PRELUDE = 12;
var FIXED = { 0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16 };
var CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) {
      c = c & 1 ? 3988292384 ^ c >>> 1 : c >>> 1;
    }
    t[n] = c >>> 0;
  }
  return t;
})();
function crc32(b) {
  let c = 4294967295;
  for (const x of b) {
    c = (CRC_TABLE[(c ^ x) & 255] ?? 0) ^ c >>> 8;
  }
  return (c ^ 4294967295) >>> 0;
}
function headersOf(raw) {
  const out = /* @__PURE__ */ new Map();
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const text = new TextDecoder();
  let i = 0;
  while (i < raw.length) {
    const n = view.getUint8(i);
    const name = text.decode(raw.subarray(i + 1, i + 1 + n));
    i += 1 + n;
    const kind = view.getUint8(i);
    i += 1;
    if (kind === 6 || kind === 7) {
      const size = view.getUint16(i);
      if (kind === 7) {
        out.set(name, text.decode(raw.subarray(i + 2, i + 2 + size)));
      }
      i += 2 + size;
    } else if (FIXED[kind] !== void 0) {
      i += FIXED[kind];
    } else {
      throw new RangeError(`header type ${kind}`);
    }
  }
  return out;
}
var EventStreamParser = class {
  buf = new Uint8Array(0);
  broken = false;
  feed(chunk) {
    const events = [];
    if (this.broken) {
      return events;
    }
    const joined = new Uint8Array(this.buf.length + chunk.length);
    joined.set(this.buf);
    joined.set(chunk, this.buf.length);
    this.buf = joined;
    while (this.buf.length >= PRELUDE) {
      const view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
      const total = view.getUint32(0);
      const headerLen = view.getUint32(4);
      if (crc32(this.buf.subarray(0, 8)) !== view.getUint32(8) || total > MAX_FRAME || total < PRELUDE + headerLen + 4) {
        return this.break(events);
      }
      if (this.buf.length < total) {
        break;
      }
      const frame = this.buf.subarray(0, total);
      this.buf = this.buf.slice(total);
      if (crc32(frame.subarray(0, total - 4)) !== new DataView(frame.buffer, frame.byteOffset).getUint32(total - 4)) {
        return this.break(events);
      }
      let headers;
      try {
        headers = headersOf(frame.subarray(PRELUDE, PRELUDE + headerLen));
      } catch {
        return this.break(events);
      }
      const event = message(headers, frame.subarray(PRELUDE + headerLen, total - 4));
      if (event) {
        events.push(event);
      }
    }
    return events;
  }
  break(events) {
    this.broken = true;
    this.buf = new Uint8Array(0);
    return events;
  }
};
function message(headers, payload) {
  const kind = headers.get(":message-type");
  const text = new TextDecoder().decode(payload);
  if (kind === "exception" || kind === "error") {
    let msg = text;
    try {
      const m = JSON.parse(text).message;
      msg = typeof m === "string" ? m : "";
    } catch {
    }
    const type = headers.get(":exception-type") ?? headers.get(":error-code") ?? "stream_error";
    return ["error", JSON.stringify({ error: { type, message: msg } })];
  }
  if (kind !== "event") {
    return null;
  }
  const event = headers.get(":event-type") ?? "";
  let body;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    return null;
  }
  const bytes = body?.bytes;
  if (event === "chunk" && typeof bytes === "string") {
    return ["chunk", Buffer.from(bytes, "base64").toString("utf8")];
  }
  return [event, JSON.stringify(body)];
}

// src/answer.ts
function errorInfo(body) {
  if (!body || typeof body !== "object") {
    return ["", ""];
  }
  const b = body;
  let err = b.error;
  if (!err || typeof err !== "object") {
    const t = b.type;
    if (t === "error" || "code" in b || typeof t === "string" && t.endsWith("_error")) {
      err = b;
    } else {
      return ["", ""];
    }
  }
  let type = "";
  for (const c of [err.code, err.type, err.status]) {
    if (typeof c === "string" && c && c !== "error") {
      type = c;
      break;
    }
  }
  const message2 = typeof err.message === "string" ? err.message : "";
  return [type, message2 + details(err.details) + resets(err)];
}
function resets(err) {
  const parts = [];
  for (const k of ["resets_at", "resets_in_seconds"]) {
    const v = err[k];
    if (typeof v === "number" && Number.isFinite(v) && v >= 0) {
      parts.push(`${k}=${Math.floor(v)}`);
    }
  }
  return parts.length ? ` [${parts.join("; ")}]` : "";
}
function details(d) {
  if (!Array.isArray(d)) {
    return "";
  }
  const parts = [];
  for (const item of d.slice(0, 8)) {
    if (!item || typeof item !== "object") {
      continue;
    }
    const o = item;
    const violations = Array.isArray(o.violations) ? o.violations.slice(0, 8) : [];
    for (const v of violations) {
      const id = v && typeof v === "object" ? v.quotaId : void 0;
      if (typeof id === "string" && id) {
        parts.push(`quotaId=${id.slice(0, 128)}`);
      }
    }
    if (typeof o.retryDelay === "string" && o.retryDelay) {
      parts.push(`retryDelay=${o.retryDelay.slice(0, 32)}`);
    }
  }
  return parts.length ? ` [${parts.join("; ")}]` : "";
}
var BEDROCK_METRICS = [
  ["inputTokenCount", "input_tokens"],
  ["outputTokenCount", "output_tokens"],
  ["cacheReadInputTokenCount", "cache_read_input_tokens"],
  ["cacheWriteInputTokenCount", "cache_creation_input_tokens"]
];
var EventWatcher = class {
  decoder = new TextDecoder();
  pending = "";
  data = [];
  event = "";
  usage = {};
  /** Bedrock's invocation metrics, for a model whose own events carry no usage. */
  metrics = {};
  /** Set for AWS event-stream answers (Bedrock's), which are frames, not lines. */
  frames;
  outcome = { usage: null, errorType: "", errorMessage: "", output: false };
  /** `contentType`: the answer's; server-sent events unless it is AWS's event stream. */
  constructor(contentType = "") {
    this.frames = contentType.toLowerCase().includes(CONTENT_TYPE) ? new EventStreamParser() : null;
  }
  feed(chunk) {
    if (this.frames) {
      for (const [event, data] of this.frames.feed(chunk)) {
        this.dispatch(event, data);
      }
      return;
    }
    this.pending += this.decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = this.pending.search(/\r\n|\r|\n/)) >= 0) {
      if (this.pending[nl] === "\r" && nl === this.pending.length - 1) {
        break;
      }
      const line = this.pending.slice(0, nl);
      const skip = this.pending.startsWith("\r\n", nl) ? 2 : 1;
      this.pending = this.pending.slice(nl + skip);
      this.line(line);
    }
    if (this.pending.length > 1 << 20) {
      this.pending = "";
    }
  }
  finish() {
    this.pending += this.decoder.decode();
    if (this.pending) {
      this.line(this.pending);
      this.pending = "";
    }
    this.line("");
    const known = Object.keys(this.usage).length ? this.usage : Object.keys(this.metrics).length ? this.metrics : null;
    const u = known ? parseUsage(known) : null;
    this.outcome.usage = u;
    return this.outcome;
  }
  line(line) {
    if (line === "") {
      if (this.data.length) {
        this.dispatch(this.event || "message", this.data.join("\n"));
      }
      this.event = "";
      this.data = [];
      return;
    }
    if (line.startsWith(":")) {
      return;
    }
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) {
      value = value.slice(1);
    }
    if (name === "event") {
      this.event = value;
    } else if (name === "data") {
      this.data.push(value);
    }
  }
  /** One event already taken out of its stream (`data`: its JSON text), as if it had come. */
  feedEvent(name, data) {
    this.dispatch(name, data);
  }
  dispatch(event, data) {
    if (data === "[DONE]") {
      return;
    }
    let obj;
    try {
      obj = JSON.parse(data);
    } catch {
      return;
    }
    if (!obj || typeof obj !== "object") {
      return;
    }
    const kind = typeof obj.type === "string" ? obj.type : event;
    const failed = kind === "response.failed" || kind === "response.incomplete";
    if (obj.error || kind === "error" || event === "error" || failed) {
      if (!this.outcome.errorType) {
        const inner = failed ? obj.response?.error : void 0;
        const [t, m] = errorInfo(inner ? { error: inner } : obj.error ? obj : { error: obj });
        this.outcome.errorType = t || (failed ? kind : "stream_error");
        this.outcome.errorMessage = m;
      }
      if (!failed) {
        return;
      }
    }
    const metrics = obj["amazon-bedrock-invocationMetrics"];
    if (metrics && typeof metrics === "object") {
      for (const [theirs, ours] of BEDROCK_METRICS) {
        const v = metrics[theirs];
        if (typeof v === "number") {
          this.metrics[ours] = v;
        }
      }
    }
    const holders = [obj, obj.message, obj.response];
    for (const h of holders) {
      for (const name of ["usage", "usageMetadata"]) {
        const u = h && typeof h === "object" ? h[name] : void 0;
        if (u && typeof u === "object") {
          for (const [k, v] of Object.entries(u)) {
            if (v !== null && v !== void 0) {
              this.usage[k] = v;
            }
          }
        }
      }
    }
    const choices = obj.choices;
    const said = (d) => !!d && ["content", "tool_calls", "refusal", "function_call", "reasoning_content"].some((k) => {
      const v = d[k];
      return Array.isArray(v) ? v.length > 0 : !!v;
    });
    if (Array.isArray(choices) && choices.some((c) => c && typeof c === "object" && said(c.delta))) {
      this.outcome.output = true;
    }
    if (kind === "content_block_delta" || kind.startsWith("response.") && kind.endsWith(".delta")) {
      this.outcome.output = true;
    }
    const candidates = obj.candidates;
    if (Array.isArray(candidates) && candidates.some((c) => {
      const parts = c?.content?.parts;
      return Array.isArray(parts) && parts.some((p) => p && typeof p === "object" && Object.keys(p).length > 0);
    })) {
      this.outcome.output = true;
    }
  }
};

// src/paths.ts
var BEDROCK_OPS = /* @__PURE__ */ new Map([
  ["invoke", false],
  ["invoke-with-response-stream", true],
  ["converse", false],
  ["converse-stream", true]
]);
var COUNTING_METHODS = /* @__PURE__ */ new Set(["countTokens", "computeTokens"]);
var COUNTING_MODELS = /* @__PURE__ */ new Set(["count-tokens"]);
var COUNTING_SUFFIXES = ["/count_tokens", "/responses/input_tokens"];
function decoded(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
function after(path2, marker, last) {
  const i = last ? path2.lastIndexOf(marker) : path2.indexOf(marker);
  return i < 0 ? null : path2.slice(i + marker.length);
}
function pathCall(path2) {
  path2 = path2.replace(/\/+$/, "");
  if (COUNTING_SUFFIXES.some((s) => path2.endsWith(s))) {
    return { limited: false, model: null, stream: false };
  }
  const bedrock = after(path2, "/model/", true);
  if (bedrock !== null) {
    const slash = bedrock.indexOf("/");
    const [model, op] = slash < 0 ? [bedrock, ""] : [bedrock.slice(0, slash), bedrock.slice(slash + 1)];
    const stream = BEDROCK_OPS.get(op);
    if (model && stream !== void 0) {
      return { limited: true, model: decoded(model), stream };
    }
  }
  const google = after(path2, "/models/", true);
  if (google !== null && !google.includes("/")) {
    const colon = google.indexOf(":");
    const method = colon < 0 ? "" : google.slice(colon + 1);
    if (method) {
      const model = decoded(google.slice(0, colon));
      if (COUNTING_METHODS.has(method) || COUNTING_MODELS.has(model)) {
        return { limited: false, model: null, stream: false };
      }
      return { limited: true, model: model || null, stream: method.startsWith("stream") };
    }
  }
  const azure = after(path2, "/openai/deployments/", false);
  if (azure !== null) {
    const deployment = azure.split("/")[0];
    if (deployment) {
      return { limited: true, model: decoded(deployment), stream: false };
    }
  }
  return { limited: true, model: null, stream: false };
}

// src/streamusage.ts
var refusing = /* @__PURE__ */ new Set();
function askUsage(path2, body) {
  const p = path2.split("?")[0].replace(/\/+$/, "");
  if (!body || typeof body !== "object" || Array.isArray(body) || !p.endsWith("/completions")) {
    return null;
  }
  const b = body;
  if (b.stream !== true) {
    return null;
  }
  const options = b.stream_options;
  const kept = options && typeof options === "object" && !Array.isArray(options) ? options : {};
  if (kept.include_usage === true) {
    return null;
  }
  return { ...b, stream_options: { ...kept, include_usage: true } };
}
function refusesUsage(status, body) {
  if (status !== 400 && status !== 422 || !body || typeof body !== "object") {
    return false;
  }
  const b = body;
  const error2 = b.error && typeof b.error === "object" ? b.error : {};
  return [error2.message, error2.param, b.error, b.message, b.detail].some(
    (s) => typeof s === "string" && (s.includes("stream_options") || s.includes("include_usage"))
  );
}
function refusedBy(origin) {
  return refusing.has(origin);
}
function rememberRefusal(origin) {
  if (refusing.has(origin)) {
    return false;
  }
  refusing.add(origin);
  return true;
}
var WS = /* @__PURE__ */ new Set([" ", "	", "\r", "\n"]);
function skipValue(t, i) {
  const c = t[i];
  if (c === '"') {
    for (let j2 = i + 1; j2 < t.length; j2++) {
      if (t[j2] === "\\") {
        j2++;
      } else if (t[j2] === '"') {
        return j2 + 1;
      }
    }
    return -1;
  }
  if (c === "{" || c === "[") {
    let depth = 0;
    for (let j2 = i; j2 < t.length; j2++) {
      const d = t[j2];
      if (d === '"') {
        const end = skipValue(t, j2);
        if (end < 0) {
          return -1;
        }
        j2 = end - 1;
      } else if (d === "{" || d === "[") {
        depth++;
      } else if (d === "}" || d === "]") {
        depth--;
        if (depth === 0) {
          return j2 + 1;
        }
      }
    }
    return -1;
  }
  let j = i;
  while (j < t.length && !",}]".includes(t[j]) && !WS.has(t[j])) {
    j++;
  }
  return j;
}
function withoutMember(text, key) {
  const ws = (i2) => {
    while (i2 < text.length && WS.has(text[i2])) {
      i2++;
    }
    return i2;
  };
  let i = ws(0);
  if (text[i] !== "{") {
    return null;
  }
  i++;
  let prevComma = -1;
  for (; ; ) {
    i = ws(i);
    if (text[i] !== '"') {
      return null;
    }
    const member = i;
    const keyEnd = skipValue(text, i);
    if (keyEnd < 0) {
      return null;
    }
    let name;
    try {
      name = JSON.parse(text.slice(member, keyEnd));
    } catch {
      return null;
    }
    i = ws(keyEnd);
    if (text[i] !== ":") {
      return null;
    }
    const valueEnd = skipValue(text, ws(i + 1));
    if (valueEnd < 0) {
      return null;
    }
    const after2 = ws(valueEnd);
    const comma = text[after2] === ",";
    if (name === key) {
      const [from, to] = comma ? [member, ws(after2 + 1)] : prevComma >= 0 ? [prevComma, valueEnd] : [member, valueEnd];
      return text.slice(0, from) + text.slice(to);
    }
    if (!comma) {
      return null;
    }
    prevComma = after2;
    i = after2 + 1;
  }
}
var decoder = new TextDecoder("utf-8", { fatal: true });
var encoder = new TextEncoder();
function eventOut(event) {
  let text;
  try {
    text = decoder.decode(event);
  } catch {
    return event;
  }
  const data = text.split(/\r\n|\r|\n/).filter((l) => l.startsWith("data:")).map((l) => l.startsWith("data: ") ? l.slice(6) : l.slice(5));
  if (data.length !== 1) {
    return event;
  }
  let chunk;
  try {
    chunk = JSON.parse(data[0]);
  } catch {
    return event;
  }
  if (!chunk || typeof chunk !== "object" || Array.isArray(chunk) || !("usage" in chunk)) {
    return event;
  }
  const c = chunk;
  if (Array.isArray(c.choices) && c.choices.length === 0 && c.usage && typeof c.usage === "object") {
    return new Uint8Array(0);
  }
  if (c.usage !== null) {
    return event;
  }
  const rewritten = withoutMember(data[0], "usage");
  return rewritten === null ? event : encoder.encode(text.replace(data[0], () => rewritten));
}
var Unasked = class {
  pending = new Uint8Array(0);
  feed(chunk) {
    const buf = new Uint8Array(this.pending.length + chunk.length);
    buf.set(this.pending);
    buf.set(chunk, this.pending.length);
    const out = [];
    let start = 0;
    let lineStart = 0;
    let i = 0;
    while (i < buf.length) {
      const c = buf[i];
      let end;
      if (c === 10) {
        end = i + 1;
      } else if (c === 13) {
        if (i + 1 === buf.length) {
          break;
        }
        end = buf[i + 1] === 10 ? i + 2 : i + 1;
      } else {
        i++;
        continue;
      }
      if (i === lineStart) {
        out.push(eventOut(buf.subarray(start, end)));
        start = end;
      }
      lineStart = end;
      i = end;
    }
    this.pending = buf.slice(start);
    return concat(out);
  }
  finish() {
    const rest = this.pending;
    this.pending = new Uint8Array(0);
    return rest;
  }
};
function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// src/fetch.ts
var MAX_ERROR_MESSAGE = 4096;
function sleep2(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
function isEventStream(res) {
  const type = (res.headers.get("content-type") ?? "").toLowerCase();
  return type.includes("text/event-stream") || type.includes(CONTENT_TYPE);
}
function isJson(res) {
  return /^application\/(json|[\w.+-]+\+json)\s*(;|$)/i.test(res.headers.get("content-type") ?? "");
}
function answered(res, usage) {
  return {
    status: res.status,
    headers: res.headers,
    inputTokens: usage?.[0],
    cachedInputTokens: usage?.[1],
    outputTokens: usage?.[2],
    usageKnown: usage !== null
  };
}
var warned = false;
async function reportSafely(lease, o, onAdvice) {
  try {
    const advice = await lease.report(o);
    onAdvice?.(advice);
    return advice;
  } catch (e) {
    if (!(e instanceof LlmctlError)) {
      throw e;
    }
    if (!warned) {
      warned = true;
      process.emitWarning(`llmctl: a report was not taken (${e.message}); the answer goes to the caller as it came`);
    }
    return null;
  }
}
function reportingStream(lease, res, body, signal, unasked, answeredUnixMs) {
  const reader = body.getReader();
  const w = new EventWatcher(res.headers.get("content-type") ?? "");
  let reported = false;
  const finish = async (how, err) => {
    if (reported) {
      return;
    }
    reported = true;
    const o = w.finish();
    const usage = o.usage;
    let errorType = o.errorType;
    let errorMessage = o.errorMessage;
    if (!errorType && how === "error") {
      errorType = signal?.aborted ? "cancelled" : "connection";
      errorMessage = String(err);
    } else if (!errorType && how === "cancel" && signal?.aborted) {
      errorType = "cancelled";
    }
    await reportSafely(lease, {
      ...answered(res, usage),
      errorType,
      errorMessage: errorMessage.slice(0, MAX_ERROR_MESSAGE),
      streamStarted: o.output,
      answeredUnixMs
    });
  };
  return new ReadableStream(
    {
      async pull(controller) {
        for (; ; ) {
          let chunk;
          try {
            chunk = await reader.read();
          } catch (e) {
            controller.error(e);
            await finish("error", e);
            return;
          }
          if (chunk.done) {
            const rest = unasked?.finish();
            if (rest && rest.length > 0) {
              controller.enqueue(rest);
            }
            controller.close();
            await finish("end");
            return;
          }
          w.feed(chunk.value);
          const out = unasked ? unasked.feed(chunk.value) : chunk.value;
          if (out.length > 0) {
            controller.enqueue(out);
            return;
          }
        }
      },
      async cancel(reason) {
        await reader.cancel(reason).catch(() => void 0);
        await finish("cancel");
      }
    },
    { highWaterMark: 0 }
  );
}
function limitedFetch(options) {
  const { client } = options;
  const inner = options.fetch ?? globalThis.fetch;
  const maxAttempts = options.maxAttempts ?? 20;
  if (!options.key && !options.routeGroup) {
    throw new TypeError("limitedFetch needs a key (or a routeGroup) to acquire on");
  }
  if (options.key) {
    checkKeyTemplate(options.key);
  }
  const limited = async (input, init) => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    const call = pathCall(url.pathname);
    if (!call.limited) {
      return inner(input, init);
    }
    const raw = typeof init?.body === "string" ? init.body : input instanceof Request ? await input.clone().text() : "";
    const est = estimateRequest(raw);
    const model = call.model ?? est.model;
    const key = options.key ? options.key.replaceAll("{model}", model || "unknown") : null;
    const signal = init?.signal ?? (input instanceof Request ? input.signal : null);
    let asked = usageAsked(url, raw, input, init);
    let firstAttempt;
    for (let attempt = 1; ; attempt++) {
      const lease = await client.acquire(key, {
        inputTokens: est.inputTokens,
        outputTokens: est.outputTokens,
        outputTokensDeclared: est.outputDeclared,
        priority: options.priority,
        maxWait: options.maxWait,
        runId: options.runId,
        routeGroup: options.key ? void 0 : options.routeGroup,
        profile: options.profile,
        attempt,
        firstAttempt,
        signal: signal ?? void 0
      });
      firstAttempt ??= Date.now();
      if (signal?.aborted) {
        await reportSafely(lease, { status: 0, errorType: "cancelled" });
        throw signal.reason;
      }
      let res;
      try {
        const [sendInput, sendInit] = asked ? [asked.input, asked.init] : [input, init];
        res = await inner(sendInput instanceof Request ? sendInput.clone() : sendInput, sendInit);
      } catch (e) {
        const cancelled = signal?.aborted === true;
        const advice2 = await reportSafely(lease, {
          status: 0,
          errorType: cancelled ? "cancelled" : "connection",
          errorMessage: String(e).slice(0, MAX_ERROR_MESSAGE)
        });
        if (cancelled || !advice2 || attempt >= maxAttempts || advice2.action !== "retry") {
          throw e;
        }
        await sleep2(advice2.retryAfterMs, signal);
        continue;
      }
      const answeredUnixMs = Date.now();
      if (res.ok) {
        if (isEventStream(res) && res.body) {
          const body = reportingStream(lease, res, res.body, signal, asked ? new Unasked() : null, answeredUnixMs);
          return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
        }
        const data = isJson(res) ? await res.clone().json().catch(() => null) : null;
        const holder = data && typeof data === "object" ? data : {};
        const usage = parseUsage(holder.usage ?? holder.usageMetadata);
        await reportSafely(lease, { ...answered(res, usage), answeredUnixMs });
        return res;
      }
      const text = await res.clone().text().catch(() => "");
      let parsed = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
      const [errorType, errorMessage] = errorInfo(parsed);
      const advice = await reportSafely(lease, {
        status: res.status,
        headers: res.headers,
        errorType,
        errorMessage: (errorMessage || text).slice(0, MAX_ERROR_MESSAGE)
      });
      if (asked && refusesUsage(res.status, parsed)) {
        if (!asked.callerOptions && rememberRefusal(url.origin)) {
          process.emitWarning(
            `llmctl: ${url.origin} refuses stream_options.include_usage; its streams go as the caller wrote them and are settled at the estimate`
          );
        }
        asked = null;
        await res.body?.cancel().catch(() => void 0);
        continue;
      }
      if (!advice || attempt >= maxAttempts || advice.action !== "retry") {
        return res;
      }
      await res.body?.cancel().catch(() => void 0);
      await sleep2(advice.retryAfterMs, signal);
    }
  };
  return limited;
}
function usageAsked(url, raw, input, init) {
  if (!raw || refusedBy(url.origin)) {
    return null;
  }
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    return null;
  }
  const sent = askUsage(url.pathname, body);
  if (!sent) {
    return null;
  }
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : void 0));
  headers.delete("content-length");
  const bodyText2 = JSON.stringify(sent);
  const own = body.stream_options;
  const callerOptions = !!own && typeof own === "object" && !Array.isArray(own);
  if (input instanceof Request) {
    return { input: new Request(input.clone(), { ...init, headers, body: bodyText2 }), init: {}, callerOptions };
  }
  return { input, init: { ...init, headers, body: bodyText2 }, callerOptions };
}
function checkKeyTemplate(key) {
  for (const found of key.match(/\{[^{}]*\}/g) ?? []) {
    if (found !== "{model}") {
      throw new TypeError(`key ${JSON.stringify(key)} has the placeholder ${found}; only {model} is replaced (by the model)`);
    }
  }
  const k = key.replaceAll("{model}", "m");
  if (k.includes("{") || k.includes("}")) {
    throw new TypeError(`key ${JSON.stringify(key)} has a lone brace; the one placeholder is {model}`);
  }
  if (new TextEncoder().encode(k).length > 256) {
    throw new TypeError(`key ${JSON.stringify(key.slice(0, 40))}... is longer than 256 bytes`);
  }
  if (/[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/.test(k)) {
    throw new TypeError(`key ${JSON.stringify(key)} has control or invisible characters; use a path like "openai/gpt-5.5"`);
  }
  if (k.split("/").some((part) => part === "")) {
    throw new TypeError(`key ${JSON.stringify(key)} has an empty segment; write it as a path like "anthropic/org-a/opus"`);
  }
}

// src/aws.ts
var aws_exports = {};
__export(aws_exports, {
  LIMITED_COMMANDS: () => LIMITED_COMMANDS,
  bedrockCounted: () => bedrockCounted,
  converseUsage: () => converseUsage,
  headersUsage: () => headersUsage,
  limit: () => limit,
  metricsUsage: () => metricsUsage,
  streamErrorStatus: () => streamErrorStatus
});
var LIMITED_COMMANDS = /* @__PURE__ */ new Set([
  "ConverseCommand",
  "ConverseStreamCommand",
  "InvokeModelCommand",
  "InvokeModelWithResponseStreamCommand"
]);
var MIDDLEWARE = "llmctlMiddleware";
var LIMITED = /* @__PURE__ */ Symbol.for("llmctl.aws.limited");
var ADVICE = /* @__PURE__ */ Symbol.for("llmctl.aws.advice");
var OURS = /* @__PURE__ */ Symbol.for("llmctl.aws.token");
var MAX_ERROR_MESSAGE2 = 4096;
var TOKEN_HEADERS = [
  "x-amzn-bedrock-input-token-count",
  "x-amzn-bedrock-output-token-count",
  "x-amzn-bedrock-cache-read-input-token-count",
  "x-amzn-bedrock-cache-write-input-token-count"
];
var CONVERSE_USAGE = ["inputTokens", "outputTokens", "cacheReadInputTokens", "cacheWriteInputTokens"];
var METRICS_USAGE = ["inputTokenCount", "outputTokenCount", "cacheReadInputTokenCount", "cacheWriteInputTokenCount"];
function count2(v) {
  if (typeof v === "number" && Number.isInteger(v) && v >= 0) {
    return v;
  }
  if (typeof v === "string" && /^\s*\d+\s*$/.test(v)) {
    return Number(v.trim());
  }
  return null;
}
function bedrockCounted(fields, names) {
  if (!fields || typeof fields !== "object") {
    return null;
  }
  const f = fields;
  const inp = count2(f[names[0]]);
  const out = count2(f[names[1]]);
  if (inp === null || out === null) {
    return null;
  }
  const read = count2(f[names[2]]) ?? 0;
  const written = count2(f[names[3]]) ?? 0;
  return [inp + read + written, read, out];
}
function converseUsage(parsed) {
  return bedrockCounted(parsed?.usage, CONVERSE_USAGE);
}
function metricsUsage(chunk) {
  return bedrockCounted(chunk?.["amazon-bedrock-invocationMetrics"], METRICS_USAGE);
}
function headersUsage(headers) {
  const lower = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    lower[k.toLowerCase()] = v;
  }
  return bedrockCounted(lower, TOKEN_HEADERS);
}
function bodyText(body) {
  if (typeof body === "string") {
    return body;
  }
  if (body instanceof Uint8Array) {
    return new TextDecoder().decode(body);
  }
  return "";
}
function usageReport(u) {
  return u ? { inputTokens: u[0], cachedInputTokens: u[1], outputTokens: u[2], usageKnown: true } : {};
}
function failure(e) {
  const err = e ?? {};
  const status = err.$metadata?.httpStatusCode ?? 0;
  const name = String(err.name ?? "Error");
  const lowered = name.toLowerCase();
  const errorType = status ? name : lowered.includes("timeout") ? "timeout" : lowered.includes("abort") ? "cancelled" : "connection";
  return { status, headers: err.$response?.headers, errorType, errorMessage: String(err.message ?? "").slice(0, MAX_ERROR_MESSAGE2) };
}
function throttled(e) {
  const err = new Error(`Too many requests, please wait before trying again. (${e.message})`);
  err.name = "ThrottlingException";
  err.$fault = "client";
  err.$metadata = { httpStatusCode: 429 };
  err.llmctl = { reason: e.reason, reasonCode: e.reasonCode, notBefore: e.notBefore, waitedMs: e.waitedMs };
  err[ADVICE] = null;
  return err;
}
var STREAM_ERROR_STATUS = {
  throttlingException: 429,
  serviceUnavailableException: 503,
  internalServerException: 500,
  modelStreamErrorException: 424,
  modelTimeoutException: 408,
  validationException: 400,
  serviceQuotaExceededException: 400
};
function streamErrorStatus(name) {
  const key = name.slice(0, 1).toLowerCase() + name.slice(1);
  return Object.hasOwn(STREAM_ERROR_STATUS, key) ? STREAM_ERROR_STATUS[key] ?? null : null;
}
function watched(events, lease, status, headers, converse, onAdvice) {
  return {
    [Symbol.asyncIterator]() {
      const it = events[Symbol.asyncIterator]();
      const w = new EventWatcher();
      let usage = null;
      let output = false;
      let reported = false;
      const report = async (extra) => {
        if (reported) {
          return;
        }
        reported = true;
        await reportSafely(lease, { status, headers, ...usageReport(usage ?? w.finish().usage), streamStarted: output, ...extra }, onAdvice);
      };
      return {
        async next() {
          let r;
          try {
            r = await it.next();
          } catch (e) {
            const f = failure(e);
            const errorType = f.errorType === "connection" ? String(e?.name ?? "stream_error") : f.errorType ?? "";
            await report({ status: streamErrorStatus(errorType) ?? status, errorType, errorMessage: f.errorMessage });
            throw e;
          }
          if (r.done) {
            await report({});
            return r;
          }
          const ev = r.value ?? {};
          if (converse) {
            usage = converseUsage(ev.metadata) ?? usage;
            output ||= "contentBlockDelta" in ev;
          } else {
            const bytes = ev.chunk?.bytes;
            if (bytes) {
              const text = new TextDecoder().decode(bytes);
              w.feedEvent("chunk", text);
              output ||= w.outcome.output;
            }
          }
          for (const [name, v] of Object.entries(ev)) {
            if (/exception$/i.test(name) && v && typeof v === "object") {
              await report({
                status: streamErrorStatus(name) ?? status,
                errorType: name.replace(/^./, (c) => c.toUpperCase()),
                errorMessage: String(v.message ?? "")
              });
            }
          }
          return r;
        },
        async return(value) {
          await report({ errorType: "cancelled" });
          return await it.return?.(value) ?? { done: true, value: void 0 };
        }
      };
    }
  };
}
function advisedStrategy(inner, maxRetries) {
  return {
    acquireInitialRetryToken: (scope) => inner?.acquireInitialRetryToken ? inner.acquireInitialRetryToken(scope) : { getRetryCount: () => 0, getRetryDelay: () => 0 },
    refreshRetryTokenForRetry: async (token, info) => {
      const err = info?.error;
      if (!err || !(ADVICE in err)) {
        if (!inner?.refreshRetryTokenForRetry) {
          throw err;
        }
        return inner.refreshRetryTokenForRetry(token, info);
      }
      const advice = err[ADVICE];
      const n = token[OURS] ? token.getRetryCount() : 0;
      if (advice?.action !== "retry" || n >= maxRetries) {
        throw err;
      }
      return { [OURS]: true, getRetryCount: () => n + 1, getRetryDelay: () => advice.retryAfterMs };
    },
    recordSuccess: (token) => {
      if (!token?.[OURS]) {
        inner?.recordSuccess?.(token);
      }
    }
  };
}
function limit(awsClient, options) {
  if (!awsClient?.middlewareStack?.addRelativeTo || !awsClient.config) {
    throw new TypeError("aws.limit takes a client of the AWS SDK for JavaScript v3 (new BedrockRuntimeClient({...}))");
  }
  if (!options?.client) {
    throw new TypeError("aws.limit needs an llmctl Client to ask: aws.limit(bedrock, { client: new Client() })");
  }
  const template = options.key ?? "bedrock/{model}";
  checkKeyTemplate(template.replaceAll("{region}", "region"));
  const maxRetries = options.maxRetries ?? 20;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new TypeError(`maxRetries must be a whole number of retries (0 or more), not ${maxRetries}`);
  }
  const marked = awsClient;
  if (marked[LIMITED]) {
    return awsClient;
  }
  marked[LIMITED] = true;
  const config = awsClient.config;
  const region = async () => {
    const r = config.region;
    const v = typeof r === "function" ? await r() : r;
    return typeof v === "string" ? v : "";
  };
  const ownStrategy = config.retryStrategy;
  config.retryStrategy = async () => advisedStrategy(ownStrategy ? await ownStrategy() : void 0, maxRetries);
  const middleware = (next, context) => async (args) => {
    const command = String(context.commandName ?? "");
    if (!LIMITED_COMMANDS.has(command)) {
      return next(args);
    }
    const call = pathCall(args.request.path ?? "");
    const raw = bodyText(args.request.body);
    const est = estimateRequest(raw);
    const model = call.model ?? est.model;
    const key = template.replaceAll("{model}", model || "unknown").replaceAll("{region}", await region() || "unknown");
    const state = context[MIDDLEWARE] ??= { attempt: 0 };
    state.attempt += 1;
    let lease;
    try {
      lease = await options.client.acquire(key, {
        inputTokens: est.inputTokens,
        outputTokens: est.outputTokens,
        outputTokensDeclared: est.outputDeclared,
        priority: options.priority,
        maxWait: options.maxWait,
        runId: options.runId,
        profile: options.profile,
        attempt: state.attempt,
        firstAttempt: state.first
      });
    } catch (e) {
      throw e instanceof NotGranted ? throttled(e) : e;
    }
    state.first ??= Date.now();
    const advised = (advice) => options.onAdvice?.(key, advice);
    let result;
    try {
      result = await next(args);
    } catch (e) {
      const advice = await reportSafely(lease, failure(e), advised);
      if (e && typeof e === "object") {
        e[ADVICE] = advice;
      }
      throw e;
    }
    const status = result.response?.statusCode ?? 200;
    const headers = result.response?.headers;
    const output = result.output ?? {};
    if (command === "ConverseStreamCommand" && output.stream) {
      output.stream = watched(output.stream, lease, status, headers, true, advised);
    } else if (command === "InvokeModelWithResponseStreamCommand" && output.body) {
      output.body = watched(output.body, lease, status, headers, false, advised);
    } else {
      const usage = command === "ConverseCommand" ? converseUsage(output) : headersUsage(headers);
      await reportSafely(lease, { status, headers, ...usageReport(usage) }, advised);
    }
    return result;
  };
  awsClient.middlewareStack.addRelativeTo(middleware, {
    name: MIDDLEWARE,
    relation: "before",
    toMiddleware: "httpSigningMiddleware",
    override: true
  });
  return awsClient;
}
export {
  ClaimHistoryLost,
  Client,
  DEFAULT_OUTPUT_TOKENS,
  EventWatcher,
  FAIL_OPEN_ATTEMPTS,
  FAIL_STATIC_FOR_MS,
  FailStatic,
  InvalidArgument,
  Lease,
  LeaseNotFound,
  LlmctlError,
  MAX_WAIT_MS,
  NotGranted,
  RESTART_WAIT_MS,
  RunBudgetExceeded,
  Unasked,
  Unavailable,
  WINDOW_MS,
  adviceOf,
  askUsage,
  aws_exports as aws,
  defaultSocket,
  errorInfo,
  estimateBody,
  isNotGranted,
  limitHeaders,
  limitedFetch,
  localAdvice,
  outagePhase,
  parseUsage,
  pathCall,
  limiter_pb_exports as pb,
  reasonCode,
  refusesUsage,
  staticLimits,
  usageOf,
  withoutMember
};
