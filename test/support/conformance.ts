/**
 * Checks each exchange of the typed client against the api's OpenAPI document: every response must be one
 * the document lists for its operation and status, with a body of its schema; every request the api
 * accepted (2xx) must conform too (path parameters and JSON body). Records which operations ran, so a
 * suite can assert it exercised them all.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

interface Schema {
  [key: string]: unknown;
}
interface Operation {
  parameters?: { name: string; in: string; schema: Schema }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
export interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
  components?: Schema;
}

interface Template {
  key: string;
  pattern: RegExp;
  names: string[];
  operation: Operation;
}

export class ConformanceRecorder {
  /** `method path-template` of each operation that answered a conforming exchange. */
  readonly exercised = new Set<string>();
  readonly problems: string[] = [];
  private readonly templates: Template[] = [];
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: OpenApiDoc) {
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const names: string[] = [];
        const source = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)\}/g, (_, name: string) => {
          names.push(name);
          return "([^/]+)";
        });
        this.templates.push({ key: `${method} ${path}`, pattern: new RegExp(`^${source}$`), names, operation });
      }
    }
  }

  /** Every documented operation as `method path-template`. */
  get operations(): string[] {
    return this.templates.map((t) => t.key);
  }

  /** A fetch for `AttestationClient({fetch})`: the exchange goes through unchanged, then is checked. */
  readonly fetch = async (request: Request): Promise<Response> => {
    const requestText = request.body === null ? "" : await request.clone().text();
    const response = await fetch(request);
    const responseText = await response.clone().text();
    this.check(request.method.toLowerCase(), new URL(request.url).pathname, requestText, response.status, responseText);
    return response;
  };

  private check(method: string, path: string, requestText: string, status: number, responseText: string): void {
    const where = `${method.toUpperCase()} ${path} -> ${status}`;
    const template = this.templates.find((t) => t.key.startsWith(`${method} `) && t.pattern.test(path));
    if (template === undefined) {
      this.problems.push(`${where}: no such operation in the document`);
      return;
    }
    const documented = template.operation.responses[String(status)];
    if (documented === undefined) {
      this.problems.push(`${where}: status not documented`);
      return;
    }
    const before = this.problems.length;
    const responseSchema = documented.content?.["application/json"]?.schema;
    if (responseSchema !== undefined) this.validate(`${where} response`, responseSchema, parse(responseText));
    if (status < 300) {
      const values = template.pattern.exec(path)?.slice(1) ?? [];
      template.names.forEach((name, i) => {
        const parameter = template.operation.parameters?.find((p) => p.in === "path" && p.name === name);
        if (parameter === undefined) this.problems.push(`${where}: path parameter ${name} not documented`);
        else this.validate(`${where} parameter ${name}`, parameter.schema, decodeURIComponent(values[i] ?? ""));
      });
      const requestBody = template.operation.requestBody;
      const bodySchema = requestBody?.content["application/json"]?.schema;
      // An optional body left out is no body to check (a DELETE /grant without the owner's consent).
      const absent = requestBody?.required !== true && requestText.trim() === "";
      if (bodySchema !== undefined && !absent) this.validate(`${where} request body`, bodySchema, parse(requestText));
      else if (requestText !== "") this.problems.push(`${where}: a body the document does not describe`);
    }
    if (this.problems.length === before) this.exercised.add(template.key);
  }

  private validate(what: string, schema: Schema, value: unknown): void {
    const key = JSON.stringify(schema);
    let validator = this.compiled.get(key);
    if (validator === undefined) {
      // The document's components ride along so that its "#/components/..." references resolve.
      validator = this.ajv.compile({ ...schema, components: this.document.components ?? {} });
      this.compiled.set(key, validator);
    }
    if (!validator(value)) this.problems.push(`${what}: ${this.ajv.errorsText(validator.errors)}`);
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A recorder for the document a running api serves. */
export async function recorderFor(apiUrl: string): Promise<ConformanceRecorder> {
  const response = await fetch(`${apiUrl.replace(/\/+$/, "")}/api/core/openapi.json`);
  return new ConformanceRecorder((await response.json()) as OpenApiDoc);
}
