import type { DeclaredObjectRecord, DeclaredObjectRepository } from './declaration-storage.js';

/** The declared-objects table, part of the in-memory storage's state (and of its snapshots). */
export interface DeclarationTables {
  /** Keyed by `kind:name`. */
  declaredObjects: Map<string, DeclaredObjectRecord>;
}

export function emptyDeclarationTables(): DeclarationTables {
  return { declaredObjects: new Map() };
}

const copy = <T>(value: T): T => structuredClone(value);

/** The repository over `tables()`, read on every call because a rolled-back transaction replaces the tables. */
export function createMemoryDeclarationRepository(tables: () => DeclarationTables): {
  declaredObjects: DeclaredObjectRepository;
} {
  return {
    declaredObjects: {
      async list() {
        const order = (a: DeclaredObjectRecord, b: DeclaredObjectRecord) =>
          a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
        return copy([...tables().declaredObjects.values()].sort(order));
      },
      async put(record) {
        tables().declaredObjects.set(`${record.kind}:${record.name}`, copy(record));
      },
      async remove(kind, name) {
        return tables().declaredObjects.delete(`${kind}:${name}`);
      },
    },
  };
}
