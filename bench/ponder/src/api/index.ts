// Ponder's GraphQL over the tables, which the benchmark polls to know when every row is in.
import { db } from 'ponder:api';
import schema from 'ponder:schema';
import { Hono } from 'hono';
import { graphql } from 'ponder';

const app = new Hono();
app.use('/graphql', graphql({ db, schema }));
export default app;
